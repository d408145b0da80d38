"""`syslogbench capacity`, by what each module holds: the search's plan (searchplan.py), RATE_MAX from a burst
(ceiling.py), the rig up for trials (session.py), the trials and what they say of the rig (measurer.py),
MLRsearch (search.py), the confirmation and latency (confirm.py), the repeats at the NDR for its interval
(repeats.py), the result (record.py), and the command
that runs them in order (command.py). docs/capacity.md describes the search."""
