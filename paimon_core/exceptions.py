"""Domain exceptions of the metadata core, one place for all of them."""


class PaimonError(Exception):
    """Base of every error the core raises on purpose."""


class TableNotExist(PaimonError):
    """The table directory or its schema is missing."""


class TableAlreadyExist(PaimonError):
    """CREATE TABLE on a table that is already there."""


class DatabaseNotExist(PaimonError):
    """The database directory is missing."""


class DatabaseAlreadyExist(PaimonError):
    """CREATE DATABASE on a database that is already there."""


class SnapshotNotFound(PaimonError):
    """A snapshot id that the table does not (or no longer) have."""


class SnapshotExpired(SnapshotNotFound):
    """A snapshot a streaming read still needs was expired before it was read (Java's
    ``OutOfRangeException``); the message names it."""


class TagNotFound(PaimonError):
    """A tag name that the table does not have."""


class TagAlreadyExists(PaimonError):
    """Creating a tag whose name is taken."""


class InvalidTagName(PaimonError):
    """A tag name Paimon would reject or that is unsafe as a file name."""


class BranchNotFound(PaimonError):
    """A branch name that the table does not have."""


class BranchAlreadyExists(PaimonError):
    """Creating (or renaming to) a branch whose name is taken."""


class CommitConflict(PaimonError):
    """Another writer changed the files this commit depends on; the commit was abandoned."""


class CommitOutcomeUnknown(PaimonError):
    """The create of ``snapshot-N`` failed without saying whether it happened (a timeout, a
    lost connection) and the snapshot cannot be found: it may still appear, so the commit's
    files are kept (orphan removal clears them if it never does)."""


class CommitFileMissing(PaimonError):
    """A file a commit would publish no longer exists (removed after it was written, e.g. by
    orphan removal with a recent ``older_than``): the commit published nothing."""


class SchemaError(PaimonError):
    """A schema or data type that cannot be parsed or is not supported."""


class InvalidArgument(PaimonError):
    """A bad argument value given by the user."""


class InvalidBranchName(InvalidArgument):
    """A branch name Paimon would reject (``main``, blank, all digits) or that is unsafe as
    a directory name."""


class MetadataFormatError(PaimonError):
    """A metadata file (manifest, manifest list, index manifest) that is corrupt or of an unknown version."""


class CorruptMetadata(PaimonError):
    """A snapshot, tag, changelog or consumer file that exists but cannot be read as one
    (torn, truncated, edited by hand, a required field missing, the wrong id).

    Read as zeros and nulls such a file would look like an empty snapshot, and lifecycle
    operations would then delete the files the real one uses: they stop instead, and the
    message names the file so that it can be repaired or removed by hand.
    """


class UnsupportedFeature(PaimonError, NotImplementedError):
    """A table feature this implementation does not handle (merge engine, file format, ...)."""


class MergeError(PaimonError):
    """Records of one primary key that the table's merge engine cannot merge, where Paimon's
    read or write fails the same way (a delete on partial-update without ``ignore-delete``, a
    retraction of an aggregate function that cannot retract, ...)."""


class DataFileUnreadable(PaimonError):
    """A data file that exists but cannot be decoded (torn, truncated, not Parquet)."""


class AtomicCreateUnsupported(UnsupportedFeature):
    """The warehouse's file system cannot create a file only if it is absent, so two
    committers could both publish the same ``snapshot-N``: publishing is refused instead."""


class HashIndexUnreadable(MetadataFormatError):
    """A dynamic-bucket HASH index file that is missing, whose size disagrees with its
    index-manifest entry, or whose hashes contradict the partition's other index files or
    the keys of its bucket's data files.

    Used as it is, keys it lost would be new keys again and land in a second bucket
    (duplicate primary keys): writes stop instead, naming the file."""


class DeletionVectorUnreadable(MetadataFormatError):
    """A deletion-vector index file that is missing, truncated, of an unknown version, or
    whose size, magic number or checksum does not match its index-manifest entry.

    Read as "no deletions" it would bring deleted rows back: reads stop instead, naming the
    file."""
