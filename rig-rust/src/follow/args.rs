//! The follower's command line: `follow --dir PATH [--everywhere]`.

use super::error::FollowError;
use std::path::PathBuf;

pub struct Args {
    /// The daemon's output directory.
    pub directory: PathBuf,
    /// A user's config: every file under it, nested ones too, not only our layout's names.
    pub everywhere: bool,
}

impl Args {
    pub fn parse(argv: &[String]) -> Result<Args, FollowError> {
        let mut parsed = Args {
            directory: PathBuf::new(),
            everywhere: false,
        };
        let mut words = argv.iter();
        while let Some(word) = words.next() {
            match word.as_str() {
                "--dir" => parsed.directory = words.next().ok_or(FollowError::DirNeedsPath)?.into(),
                "--everywhere" => parsed.everywhere = true,
                other => return Err(FollowError::UnknownArgument(other.into())),
            }
        }
        if parsed.directory.as_os_str().is_empty() {
            return Err(FollowError::Usage);
        }
        Ok(parsed)
    }
}
