"""Daemon profiles: each manifest loads and builds from what it names, and its configs render from it."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

from syslogbench.host import families, images, profiles, render, tuning
from syslogbench.host.profiles import Profile, ProfileError
from syslogbench.model import scenarios

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = sorted(p for p in (ROOT / "daemons").iterdir() if p.is_dir() and not p.name.startswith("_"))
BASES = yaml.safe_load((ROOT / "images" / "bases.yaml").read_text())


def loadable(folder: Path) -> Profile | None:
    """The folder's profile, or None: a broken manifest fails test_manifest_loads, not the collection."""
    try:
        return profiles.load_manifest(folder / "manifest.yaml")
    except Exception:  # noqa: BLE001 - reported by test_manifest_loads
        return None


PROFILES = [profile for profile in map(loadable, FOLDERS) if profile is not None]
BY_FAMILY = {
    daemon: [p for p in PROFILES if p.daemon == daemon] for daemon in ("rsyslog", "syslog-ng", "nxlog")
}
BASELINES = [p for p in PROFILES if p.daemon == "baseline"]
# The seed's 2014 daemons, with the seed's names (issue #3).
SEED_DAEMONS = ["rsyslog5", "rsyslog7", "syslog-ng-3.3", "syslog-ng-3.5", "nxlog"]


def ids(profile: Profile) -> str:
    return profile.profile


def dockerfile(profile: Profile) -> list[str]:
    """Dockerfile instructions, with continuation lines joined and comments dropped."""
    text = profile.dockerfile.read_text()
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    return [line.strip() for line in joined.splitlines() if line.strip()]


def instruction(profile: Profile, name: str) -> list[str]:
    return [line[len(name) + 1 :].strip() for line in dockerfile(profile) if line.startswith(name + " ")]


def installed_packages(profile: Profile) -> list[str]:
    packages = []
    for run in instruction(profile, "RUN"):
        for command in run.split("&&"):
            words = shlex.split(command)
            if words[:2] == ["apt-get", "install"]:
                packages += [word for word in words[2:] if not word.startswith("-")]
    return packages


def test_there_are_profiles() -> None:
    assert len(FOLDERS) >= 2
    assert [p.profile for p in profiles.all_profiles()] == [folder.name for folder in FOLDERS]
    assert BY_FAMILY["rsyslog"] and BY_FAMILY["syslog-ng"] and BY_FAMILY["nxlog"]
    assert len(PROFILES) == sum(len(family) for family in BY_FAMILY.values()) + len(BASELINES)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_manifest_loads(folder: Path) -> None:
    assert (folder / "manifest.yaml").is_file()
    assert profiles.load_manifest(folder / "manifest.yaml").profile == folder.name


@pytest.mark.parametrize("profile", PROFILES, ids=ids)
def test_manifest_matches_its_folder(profile: Profile) -> None:
    assert profile.folder.name == profile.profile
    assert profile.image == f"syslogbench/{profile.profile}:{profiles.image_tag()}"
    if profile.daemon == "baseline":
        return  # the baseline's package is its interpreter, not a daemon of that version
    assert profile.package.startswith(("rsyslog=", "syslog-ng-core=", "nxlog-ce="))
    assert profile.package.split("=", 1)[1].startswith(profile.version)
    assert profile.dockerfile.is_file()


DEBIAN = [p for p in PROFILES if not p.registry_image]
REGISTRY_PROFILES = [p for p in PROFILES if p.registry_image]
FAMILIES = sorted({p.daemon for p in DEBIAN})


def test_every_debian_version_builds_from_the_family_dockerfile() -> None:
    """One Dockerfile, one stage per family; no version folder keeps a Dockerfile of its own."""
    assert FAMILIES == ["baseline", "rsyslog", "syslog-ng"]
    assert {p.dockerfile for p in DEBIAN} == {profiles.FAMILY_DOCKERFILE}
    assert [p.profile for p in DEBIAN if (p.folder / "Dockerfile").exists()] == []
    assert [p.target for p in DEBIAN] == [p.daemon for p in DEBIAN]
    assert set(FAMILIES) <= set(profiles.stage_commands(profiles.FAMILY_DOCKERFILE))


def test_family_dockerfile_takes_the_manifest_values_as_build_arguments() -> None:
    text = profiles.FAMILY_DOCKERFILE.read_text()
    assert "FROM syslogbench/base:${SUITE} AS debian" in text
    assert "apt-get install -y --no-install-recommends ${PACKAGES}" in text
    assert "COPY ${PROFILE}/ /etc/syslogbench/" in text
    assert 'ENV VERSION_CMD="${VERSION_CMD}"' in text
    assert [line for line in text.splitlines() if line.startswith("ENTRYPOINT")] == [
        'ENTRYPOINT ["/usr/local/bin/supervise"]'
    ]


@pytest.mark.parametrize("profile", DEBIAN, ids=ids)
def test_debian_packages_are_pinned_and_plugins_share_the_version(profile: Profile) -> None:
    version = profile.package.split("=", 1)[1]
    assert profile.packages[0] == profile.package
    assert profile.packages[1:] == [f"{plugin}={version}" for plugin in profile.plugins]
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9.+-]*=[0-9][0-9A-Za-z.+~:-]*", p) for p in profile.packages)


@pytest.mark.parametrize("profile", REGISTRY_PROFILES, ids=ids)
def test_registry_dockerfile_builds_from_the_manifest_base(profile: Profile) -> None:
    assert instruction(profile, "FROM") == [profile.registry_image]


@pytest.mark.parametrize("profile", [p for p in PROFILES if p.suite], ids=ids)
def test_base_is_declared(profile: Profile) -> None:
    """Pinned by digest, or saying why not (sid: set-up always builds it with debootstrap)."""
    assert profile.base in BASES
    base = images.load_bases()[profile.base]
    assert base.pinned or base.unpinned_why


def test_the_seed_daemons_are_registry_profiles() -> None:
    assert sorted(p.profile for p in REGISTRY_PROFILES) == sorted(SEED_DAEMONS)


@pytest.mark.parametrize("profile", REGISTRY_PROFILES, ids=ids)
def test_registry_image_is_pinned_by_digest_or_says_why_not(profile: Profile) -> None:
    """A digest where one could be found; else the exact version is the pin, and the manifest says so."""
    ref = profile.registry_image
    assert ref is not None and ":" in ref.split("/")[-1], f"{ref} names no tag"
    if "@" in ref:
        assert re.fullmatch(r"[^@]+@sha256:[0-9a-f]{64}", ref), ref
    else:
        assert "no digest could be found" in profile.notes
        assert profile.package.split("=", 1)[1] in profile.dockerfile.read_text()
    assert "Needs Docker Hub" in profile.notes
    # The marker the supervisor reports as the result's daemon.base, as a pulled syslogbench base has.
    runs = " ".join(instruction(profile, "RUN"))
    assert f'echo "pull {ref}" > /etc/syslogbench-base' in runs


@pytest.mark.parametrize("profile", REGISTRY_PROFILES, ids=ids)
def test_registry_dockerfile_installs_exactly_the_manifest_package(profile: Profile) -> None:
    """A registry-based version's own Dockerfile still spells its package: it must be the manifest's."""
    if profile.package.split("=", 1)[1] in (profile.registry_image or ""):
        assert installed_packages(profile) == []  # the image is the package (NXLog's own image)
        return
    assert installed_packages(profile) == [profile.package]
    assert profile.plugins == []


@pytest.mark.parametrize("profile", [p for p in PROFILES if "tls" in p.features], ids=ids)
def test_tls_profiles_install_their_tls_driver(profile: Profile) -> None:
    """rsyslog needs its GnuTLS netstream driver; syslog-ng-core carries TLS in its afsocket module."""
    if profile.daemon == "rsyslog":
        assert f"rsyslog-gnutls={profile.package.split('=', 1)[1]}" in profile.packages
    else:
        assert profile.daemon == "syslog-ng" and profile.packages == [profile.package]
        assert profile.package.startswith("syslog-ng-core=")


def test_registry_base_needs_an_image(tmp_path: Path) -> None:
    data = yaml.safe_load((FOLDERS[0] / "manifest.yaml").read_text())
    folder = tmp_path / data["profile"]
    folder.mkdir()
    (folder / "manifest.yaml").write_text(yaml.safe_dump({**data, "base": "registry:"}))
    with pytest.raises(ProfileError, match="names no image"):
        profiles.load_manifest(folder / "manifest.yaml")


@pytest.mark.parametrize("profile", REGISTRY_PROFILES, ids=ids)
def test_registry_dockerfile_cmd_and_version_cmd(profile: Profile) -> None:
    (cmd,) = instruction(profile, "CMD")
    assert json.loads(cmd) == profile.command
    assert f'VERSION_CMD="{profile.version_cmd}"' in instruction(profile, "ENV")


def test_family_commands() -> None:
    """How each family starts (the CMD of its stage), as each version's image has it."""
    commands = {p.daemon: p.command for p in DEBIAN}
    assert commands == {
        "baseline": ["python3", "/etc/syslogbench/receiver.py"],
        "rsyslog": ["rsyslogd", "-n", "-f", "/etc/syslogbench/active.conf", "-i", "/run/rsyslogd.pid"],
        "syslog-ng": ["syslog-ng", "-F", "--no-caps", "-f", "/etc/syslogbench/active.conf", "-p",
                      "/run/syslog-ng.pid", "-R", "/var/lib/syslog-ng/syslog-ng.persist", "-c",
                      "/run/syslog-ng.ctl"],
    }  # fmt: skip


@pytest.mark.parametrize("profile", PROFILES, ids=ids)
def test_command_uses_the_committed_config(profile: Profile) -> None:
    # Rendered profiles start on active.conf, which the supervisor links to the SCENARIO's config.
    config = profile.config.get("file", "active.conf") if "template" not in profile.config else "active.conf"
    assert f"/etc/syslogbench/{config}" in profile.command
    if "template" not in profile.config:
        assert (profile.folder / config).is_file(), (
            f"{config} is the hand-written config of {profile.profile}"
        )


@pytest.mark.parametrize("profile", [p for p in PROFILES if "template" in p.config], ids=ids)
def test_committed_configs_are_rendered_for_each_supported_scenario(profile: Profile) -> None:
    supported = [s for s in scenarios.all_scenarios() if not scenarios.unsupported(s, profile.features)]
    # Sorted by id, not by file name: "tls-rfc5424.conf" sorts before "tls.conf".
    committed = sorted(path.stem for path in (profile.folder / "scenarios").glob("*.conf"))
    assert committed == sorted(s.id for s in supported), "run `python -m syslogbench render`"
    for scenario in supported:
        path = render.config_path(profile, scenario.id)
        assert path.read_text() == render.render(profile, scenario), (
            f"{path.relative_to(ROOT)} differs from its template and manifest: run `python -m syslogbench render`"
        )
    assert (profile.folder / "scenarios" / "seed2014.conf").is_file(), "every daemon runs the seed scenario"


def test_plain_and_parallelize_scenarios_render_as_expected() -> None:
    rsyslog, syslog_ng = BY_FAMILY["rsyslog"][0], next(p for p in PROFILES if "parallelize" in p.features)
    plain = scenarios.load("plain")
    assert 'action(type="omfile" file="/var/log/bench/test.rsyslog.all.log")' in render.render(rsyslog, plain)
    assert "dynaFile" not in render.render(rsyslog, plain)
    assert 'file("/var/log/bench/test.syslog-ng.all.log")' in render.render(syslog_ng, plain)
    text = render.render(syslog_ng, scenarios.load("parallelize4"))
    assert "log { source(s_bench); parallelize(" in text  # spelled per version: the test below


@pytest.mark.parametrize(
    ("name", "option"),
    [("syslog-ng-3.28", "partitions"), ("syslog-ng-4.8", "partitions"), ("syslog-ng-4.12", "workers")],
)
def test_parallelize_is_spelled_as_each_version_wants(name: str, option: str) -> None:
    """4.12 warns that partitions() is obsolete and wants workers(); 4.8 refuses workers() (--syntax-only)."""
    text = render.render(by_name(name), scenarios.load("parallelize4"))
    assert f"log {{ source(s_bench); parallelize({option}(4)); destination(d_bench); }};" in text


@pytest.mark.parametrize(("name", "version"), [("syslog-ng-4.8", "4.8"), ("syslog-ng-4.12", "4.12")])
def test_syslog_ng_4_declares_its_own_config_version(name: str, version: str) -> None:
    """What each version asks for: another @version draws a warning naming the version it wants."""
    assert render.render(by_name(name)).startswith(f"@version: {version}\n")


RAINERSCRIPT = [p for p in BY_FAMILY["rsyslog"] if p.config["template"] == "rsyslog.conf.j2"]


@pytest.mark.parametrize("profile", RAINERSCRIPT, ids=ids)
def test_rsyslog_config(profile: Profile) -> None:
    text = render.render(profile)
    assert 'module(load="imtcp")' in text
    assert 'input(type="imtcp" port="514")' in text
    assert "\n$RepeatedMsgReduction off\n" in text
    assert (
        'string="/var/log/bench/test.rsyslog.facility.%syslogfacility%.severity.%syslogseverity%.log"' in text
    )
    assert 'dynaFile="bench_split"' in text
    done_action = (
        r'if \(\$msg contains "DONE"\) then \{\s*'
        r'action\(type="omfile" file="/var/log/bench/done\.log"\)'
    )
    assert re.search(done_action, text)


def test_a_knob_renders_into_its_slot_as_the_family_writes_a_parameter() -> None:
    profile = BY_FAMILY["rsyslog"][0]
    seed = scenarios.load("seed2014")
    knobs = families.get("rsyslog").knobs
    step = tuning.custom(knobs, render.target(profile, seed), {"file-cache": "200"})
    text = render.render(profile, seed, step)
    assert 'action(type="omfile" dynaFile="bench_split" dynaFileCacheSize="200")' in text
    assert 'file="/var/log/bench/done.log")' in text, "done.log keeps the defaults"
    assert "dynaFileCacheSize" not in render.render(profile, seed)


# --- version dialects, rendered from the one scenario --------------------------------------------------------


def by_name(name: str) -> Profile:
    return next(p for p in PROFILES if p.profile == name)


@pytest.mark.parametrize("scenario_id", ["seed2014", "plain"])
def test_rsyslog5_speaks_legacy_syntax_only(scenario_id: str) -> None:
    profile = by_name("rsyslog5")
    assert profile.config["template"] == "rsyslog-legacy.conf.j2"
    assert profile.command[:2] == ["rsyslogd", "-c5"]
    text = render.render(profile, scenarios.load(scenario_id))
    directives = [line for line in text.splitlines() if line and not line.startswith("#")]
    for rainerscript in ("module(", "input(", "action(", "template(", "global(", "if ("):
        assert rainerscript not in text, rainerscript
    assert "$ModLoad imtcp" in directives
    assert directives.index("$ModLoad imtcp") < directives.index("$InputTCPServerRun 514")
    assert "$RepeatedMsgReduction off" in directives
    assert ':msg, contains, "DONE" /var/log/bench/done.log' in directives
    if scenario_id == "seed2014":
        assert (
            '$template bench_split,"/var/log/bench/test.rsyslog.facility.%syslogfacility%'
            '.severity.%syslogseverity%.log"' in directives
        )
        assert "*.* ?bench_split" in directives
    else:
        assert "*.* /var/log/bench/test.rsyslog.all.log" in directives


def test_rsyslog5_omfile_params_are_legacy_directives_before_the_action() -> None:
    text = render.render(by_name("rsyslog5"), omfile={"DynaFileCacheSize": "200"})
    assert text.index("$DynaFileCacheSize 200") < text.index("*.* ?bench_split")


def test_rsyslog7_sets_its_work_directory_the_legacy_way() -> None:
    text = render.render(by_name("rsyslog7"))
    assert "global(workDirectory" not in text
    assert "\n$WorkDirectory /var/spool/rsyslog\n" in text
    eight = render.render(next(p for p in BY_FAMILY["rsyslog"] if p.version.startswith("8.")))
    assert 'global(workDirectory="/var/spool/rsyslog")' in eight and "$WorkDirectory" not in eight


@pytest.mark.parametrize("name", ["syslog-ng-3.3", "syslog-ng-3.5"])
def test_old_syslog_ng_dialect(name: str) -> None:
    profile = by_name(name)
    text = render.render(profile)
    assert text.startswith(f"@version: {name.rsplit('-', 1)[1]}\n")
    assert "$SEVERITY" not in text and "${SEVERITY}" not in text
    assert "${LEVEL_NUM}" in text and "${FACILITY_NUM}" in text
    assert "options { threaded(yes); keep-hostname(yes); };" in text
    assert "threaded() defaults to no before syslog-ng 3.6" in text
    assert "divided by max-connections" in text and "raises to its minimum of 100" in text
    assert "parallelize" not in profile.features
    assert profile.settings["threaded"].startswith("yes (default no before 3.6)")


def test_newer_syslog_ng_has_no_pre_3_6_notes() -> None:
    text = render.render(by_name("syslog-ng-4.8"))
    assert "before syslog-ng 3.6" not in text and "log-iw-size" not in text


def test_nxlog_dialect() -> None:
    profile = by_name("nxlog")
    text = render.render(profile)
    assert "Module im_tcp" in text and "Port 514" in text
    assert "Exec parse_syslog_bsd();" in text
    # Numbers, not NXLog's upper-case names, so the files are named as for every other daemon.
    assert (
        'File "/var/log/bench/test.nxlog.facility." + string($SyslogFacilityValue)'
        ' + ".severity." + string($SyslogSeverityValue) + ".log"'
    ) in text
    assert "$SyslogFacility " not in text.replace('$SyslogFacility "', "")
    assert 'File "/var/log/bench/done.log"' in text
    assert "Exec if not ($Message =~ /DONE/) drop();" in text
    assert "Path in_bench => bench_file, done_file" in text
    assert "reopens" in profile.notes
    plain = render.render(profile, scenarios.load("plain"))
    assert 'File "/var/log/bench/test.nxlog.all.log"' in plain and "SyslogFacilityValue" not in plain


def test_every_split_config_names_files_as_the_reconciler_reads_them() -> None:
    """One reconciliation reads every daemon: fill each split file-name expression with numbers."""
    from syslogbench.contract import SPLIT_RE

    patterns = {
        "rsyslog": ("%syslogfacility%", "%syslogseverity%"),
        "syslog-ng": ("${FACILITY_NUM}", "${LEVEL_NUM}"),
        "nxlog": ('." + string($SyslogFacilityValue) + ".', '." + string($SyslogSeverityValue) + ".'),
    }
    for profile in PROFILES:
        if profile.daemon not in patterns:
            continue
        text = render.render(profile)
        facility, severity = patterns[profile.daemon]
        line = next(line for line in text.splitlines() if facility in line and severity in line)
        name = re.search(r"test\.[^\"]*?\.log", line.replace(facility, ".16.").replace(severity, ".6."))
        assert name is not None, line
        filled = re.sub(r"\.+", ".", name.group(0))
        assert filled == f"test.{profile.daemon}.facility.16.severity.6.log", profile.profile
        assert SPLIT_RE.match(filled), filled


@pytest.mark.parametrize("profile", BY_FAMILY["syslog-ng"], ids=ids)
def test_syslog_ng_config(profile: Profile) -> None:
    text = render.render(profile)
    major_minor = ".".join(profile.version.split(".")[:2])
    assert text.startswith(f"@version: {major_minor}\n")
    assert "tcp(port(514) max-connections(25))" in text
    assert "threaded(yes)" in text
    assert 'file("/var/log/bench/test.syslog-ng.facility.${FACILITY_NUM}.severity.${LEVEL_NUM}.log")' in text
    assert 'file("/var/log/bench/done.log")' in text
    assert 'match("DONE" value("MESSAGE"))' in text


def test_resolve_aliases() -> None:
    rsyslog = profiles.resolve("rsyslog8")
    syslog_ng = profiles.resolve("syslog-ng")
    assert rsyslog.daemon == "rsyslog"
    assert syslog_ng.daemon == "syslog-ng"
    assert [p.profile for p in PROFILES if "rsyslog8" in p.aliases] == [rsyslog.profile]
    assert [p.profile for p in PROFILES if "syslog-ng" in p.aliases] == [syslog_ng.profile]


def test_the_default_profile_is_the_one_manifest_marked_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command without --profile runs the seed's rsyslog 8 because its manifest says so, not Python."""
    assert profiles.default_name() == "rsyslog8"
    assert [p.profile for p in PROFILES if p.default] == [profiles.resolve("rsyslog8").profile]
    unmarked = [Profile(**{**vars(p), "default": False}) for p in PROFILES]
    monkeypatch.setattr(profiles, "all_profiles", lambda: unmarked)
    with pytest.raises(ProfileError, match="exactly one manifest must say default: true.*these do: none"):
        profiles.default_name()
    monkeypatch.setattr(
        profiles, "all_profiles", lambda: [Profile(**{**vars(p), "default": True}) for p in PROFILES]
    )
    with pytest.raises(ProfileError, match="these do: baseline, "):
        profiles.default_name()


@pytest.mark.parametrize("profile", PROFILES, ids=ids)
def test_resolve_by_profile_name(profile: Profile) -> None:
    assert profiles.resolve(profile.profile) == profile


def test_resolve_unknown_lists_known_names() -> None:
    with pytest.raises(ProfileError) as error:
        profiles.resolve("nope")
    message = str(error.value)
    assert message.startswith("unknown profile 'nope'. Known profiles: ")
    for profile in PROFILES:
        assert profile.profile in message
        for alias in profile.aliases:
            assert alias in message


def test_names_and_aliases_are_unique() -> None:
    every = [name for p in PROFILES for name in [p.profile, *p.aliases]]
    assert len(every) == len(set(every))
    assert sorted(profiles.names()) == sorted(every)


def manifest_error(tmp_path: Path, folder_name: str | None, text: str) -> str:
    """The message load_manifest gives for this manifest text; it must be one line."""
    data = yaml.safe_load((ROOT / "daemons" / "syslog-ng-4.8" / "manifest.yaml").read_text())
    folder = tmp_path / (folder_name or data["profile"])
    folder.mkdir()
    (folder / "manifest.yaml").write_text(text)
    with pytest.raises(ProfileError) as error:
        profiles.load_manifest(folder / "manifest.yaml")
    message = str(error.value)
    assert "\n" not in message, message
    assert message.startswith(f"{folder / 'manifest.yaml'}: "), message
    return message.split(": ", 1)[1]


SYSLOG_NG = yaml.safe_load((ROOT / "daemons" / "syslog-ng-4.8" / "manifest.yaml").read_text())


@pytest.mark.parametrize(
    ("folder", "change", "message"),
    [
        (None, {"package": None}, "missing keys ['package']"),
        (None, {"colour": "blue"}, "unknown keys ['colour']; the keys are: profile, daemon, version,"),
        (None, {"command": ["syslog-ng"]}, "unknown keys ['command']; the keys are: "),
        ("elsewhere", {}, "profile 'syslog-ng-4.8' must match its folder 'elsewhere'"),
        (None, {"package": "syslog-ng-core"}, "package 'syslog-ng-core' must be pinned as name=version"),
        (None, {"plugins": ["x=1"]}, "plugins ['x=1'] are names only: each installs at 4.8.1-5+deb13u1"),
        (None, {"daemon": "debian"}, "daemon 'debian' has no stage in daemons/Dockerfile (the families: "),
        (None, {"base": "registry:"}, "base 'registry:' names no image after 'registry:'"),
        (None, {"base": "registry:x:1"}, "a registry base needs its own Dockerfile in syslog-ng-4.8/"),
    ],
)
def test_manifest_errors_are_one_clear_line(
    tmp_path: Path, folder: str | None, change: dict, message: str
) -> None:
    data = {key: value for key, value in {**SYSLOG_NG, **change}.items() if value is not None}
    assert manifest_error(tmp_path, folder, yaml.safe_dump(data)).startswith(message)


def test_broken_yaml_and_a_list_are_one_clear_line(tmp_path: Path) -> None:
    assert manifest_error(tmp_path, "a", "profile: [a\n").startswith("not valid YAML at line 2: ")
    assert manifest_error(tmp_path, "b", "- profile\n") == (
        "must be a mapping of keys (profile:, daemon:, version:, ...)"
    )


def test_every_manifest_renders_its_compose_service() -> None:
    for profile in PROFILES:
        service = render.compose_service(profile)
        assert service["profiles"] == [profile.profile, *profile.aliases]
        assert service["image"] == f"syslogbench/{profile.profile}:${{IMAGE_TAG:-local}}"


def test_udp_scenarios_render_udp_inputs_and_no_tcp_port() -> None:
    for profile in [p for p in PROFILES if not p.registry_image]:  # the seed's daemons declare no udp
        if profile.daemon == "baseline":
            assert scenarios.unsupported(scenarios.load("udp"), profile.features) == [
                "needs the 'udp' feature"
            ]
            continue
        assert "udp" in profile.features, profile.profile
        text = render.render(profile, scenarios.load("udp"))
        if profile.daemon == "rsyslog":
            assert (
                'input(type="imudp" port="514" rcvbufSize=`echo $UDP_RCVBUF`)' in text and "imtcp" not in text
            )
        else:
            assert (
                'network(transport("udp") port(514) so-rcvbuf(`UDP_RCVBUF`));' in text and "tcp(" not in text
            )


def test_fixed_rate_tcp_renders_like_the_seed() -> None:
    """The rate lives in the senders only: the daemon's config for tcp-rate is the seed's."""
    for profile in PROFILES:
        if "template" in profile.config:
            seed = render.render(profile, scenarios.load("seed2014")).replace("scenario seed2014", "")
            assert render.render(profile, scenarios.load("tcp-rate")).replace("scenario tcp-rate", "") == seed
