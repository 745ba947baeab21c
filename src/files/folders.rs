//! Folders of dlqspec's own below a folder the user named (`grade`'s `NAME/explain/`): made
//! where nothing is, and never reached through a link, so that nothing written into one lands
//! outside the folder the user named.

use std::io;
use std::path::{Component, Path, PathBuf};

/// `root/relative`, each folder of `relative` made where nothing is. Refused where one is a
/// symbolic link or not a folder (planted, or made by someone else): written through, it could
/// put a file anywhere. `root` is the user's to choose, and may itself be a link.
pub(crate) fn own_folder(root: &Path, relative: &Path) -> io::Result<PathBuf> {
    walk(root, relative, true)
}

/// `root/relative` when each folder of `relative` is there and a folder, none a link; `None`
/// otherwise. Nothing is made.
pub(crate) fn existing_own_folder(root: &Path, relative: &Path) -> Option<PathBuf> {
    walk(root, relative, false).ok()
}

fn walk(root: &Path, relative: &Path, make: bool) -> io::Result<PathBuf> {
    // All checked before any is made: `a/../..` makes no `a`.
    if !relative
        .components()
        .all(|component| matches!(component, Component::Normal(_)))
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} does not name a folder below {}",
                relative.display(),
                root.display()
            ),
        ));
    }
    let mut path = root.to_path_buf();
    for name in relative.components() {
        path.push(name);
        let found = match std::fs::symlink_metadata(&path) {
            Err(error) if make && error.kind() == io::ErrorKind::NotFound => {
                // Made here, or by someone else meanwhile: checked below as any found one.
                if let Err(error) = std::fs::create_dir(&path)
                    && error.kind() != io::ErrorKind::AlreadyExists
                {
                    return Err(error);
                }
                std::fs::symlink_metadata(&path)?
            }
            found => found?,
        };
        if !found.is_dir() {
            let what = if found.is_symlink() {
                "a symbolic link"
            } else {
                "not a folder"
            };
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{} is {what}, where dlqspec keeps a folder of its own: remove it, or write into another folder",
                    path.display()
                ),
            ));
        }
    }
    Ok(path)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn folders_are_made_below_the_root_and_found_again() {
        let dir = tempfile::tempdir().unwrap();
        let relative = Path::new("alice/explain");
        assert_eq!(existing_own_folder(dir.path(), relative), None);
        let made = own_folder(dir.path(), relative).unwrap();
        assert_eq!(made, dir.path().join("alice/explain"));
        assert!(made.is_dir());
        assert_eq!(own_folder(dir.path(), relative).unwrap(), made);
        assert_eq!(existing_own_folder(dir.path(), relative), Some(made));
    }

    #[test]
    fn a_link_or_a_file_on_the_way_is_refused_and_nothing_is_made_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("alice")).unwrap();
        let error = own_folder(dir.path(), Path::new("alice/explain")).unwrap_err();
        assert!(
            error.to_string().contains("alice is a symbolic link"),
            "{error}"
        );
        assert_eq!(existing_own_folder(dir.path(), Path::new("alice")), None);
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
        std::fs::create_dir(dir.path().join("bob")).unwrap();
        std::fs::write(dir.path().join("bob/explain"), "a file").unwrap();
        let error = own_folder(dir.path(), Path::new("bob/explain")).unwrap_err();
        assert!(
            error.to_string().contains("explain is not a folder"),
            "{error}"
        );
        assert_eq!(
            existing_own_folder(dir.path(), Path::new("bob/explain")),
            None
        );
    }

    #[test]
    fn the_root_may_be_a_link_and_nothing_may_climb_out_of_it() {
        let real = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("grades");
        std::os::unix::fs::symlink(real.path(), &root).unwrap();
        own_folder(&root, Path::new("alice")).unwrap();
        assert!(real.path().join("alice").is_dir());
        for climbing in ["../x", "/tmp/x", "a/../../x"] {
            let error = own_folder(&root, Path::new(climbing)).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::InvalidInput, "{climbing}");
        }
        assert!(!real.path().join("a").exists());
    }
}
