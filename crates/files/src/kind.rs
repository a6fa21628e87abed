//! What kind of file a path is, and which file it is.

use std::fs::Metadata;

/// The kinds of file the rules treat differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// A regular file.
    Regular,
    /// A directory.
    Directory,
    /// A character device (`/dev/null`, a terminal).
    CharDevice,
    /// A block device (a disk).
    BlockDevice,
    /// A named pipe.
    Fifo,
    /// A Unix socket.
    Socket,
    /// Anything else the platform has.
    Other,
}

impl Kind {
    /// The kind of the file `metadata` describes (of a link's target when followed).
    pub fn of(metadata: &Metadata) -> Self {
        let file_type = metadata.file_type();
        if file_type.is_file() {
            return Self::Regular;
        }
        if file_type.is_dir() {
            return Self::Directory;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if file_type.is_char_device() {
                return Self::CharDevice;
            }
            if file_type.is_block_device() {
                return Self::BlockDevice;
            }
            if file_type.is_fifo() {
                return Self::Fifo;
            }
            if file_type.is_socket() {
                return Self::Socket;
            }
        }
        Self::Other
    }

    /// "a directory", "a character device", ... for messages.
    pub fn described(self) -> &'static str {
        match self {
            Self::Regular => "a regular file",
            Self::Directory => "a directory",
            Self::CharDevice => "a character device",
            Self::BlockDevice => "a block device",
            Self::Fifo => "a FIFO",
            Self::Socket => "a socket",
            Self::Other => "not a regular file",
        }
    }
}

/// Which file on which device: equal for two paths to one file, links included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileId {
    device: u64,
    inode: u64,
}

impl FileId {
    /// The identity of the file `metadata` describes, where the platform tells it.
    pub(crate) fn of(metadata: &Metadata) -> Option<Self> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(Self {
                device: metadata.dev(),
                inode: metadata.ino(),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = metadata;
            None
        }
    }
}

/// The permission bits of a file (0 where the platform has none).
pub(crate) fn mode(metadata: &Metadata) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        metadata.permissions().mode()
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        0
    }
}
