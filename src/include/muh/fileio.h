/*
 * fileio.h — reading a whole file, and the I/O layer the write-back goes
 * through (so that a test can make any of its writes fail).
 *
 * Every open/write/fsync/rename/unlink/mkdir of a file muh patch writes is a
 * fio_* call, and every write/sync/truncate/delete of the store is counted
 * the same way (src/store/store_vfs.c). Each call counts; a fault armed at N makes the Nth call from
 * the arming fail once (errno EIO, ENOSPC for write), as SQLite's test VFS
 * does, so a test can loop N = 1, 2, 3, ... over an operation until it
 * succeeds and check after each failure that nothing was damaged.
 *
 * Arming: fio_fault_arm(N) (unit tests), or the environment variable
 * MUH_FAULT_IO=N read at the first fio_* call (the CLI). MUH_FAULT_SLEEP_MS=M
 * sleeps M milliseconds before each fio_rename, so that a test can kill -9
 * the process between two renames; MUH_FAULT_KILL=N kills the process
 * (SIGKILL) just before its Nth counted call, so that a test can stop it at
 * every point in turn. MUH_FAULT_IO_STATS=1 prints the number of calls at exit. None of these is meant for users.
 */
#ifndef MUH_FILEIO_H
#define MUH_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

#include "muh/api.h"

MUH_BEGIN_DECLS

/* Reads path whole into a malloc'd, NUL-terminated buffer and sets *len
 * (the NUL is not counted). Returns NULL with errno set when the file cannot
 * be read: ENOMEM when memory runs out, else the real cause, from the open
 * or from the read (EISDIR for a directory, not EIO). Works for pipes and
 * files whose size changes while read. */
char *file_read(const char *path, size_t *len);

/* 1 when the folder that holds file path exists (a path without '/': the
 * current folder, which does). A stored path from another machine fails. */
int file_dir_exists(const char *path);

/* Reads an open descriptor whole, like file_read. Does not close fd. */
char *file_read_fd(int fd, size_t *len);

/* Arms a fault: the nth fio_* call from now fails, once (n = 0 disarms).
 * Overrides MUH_FAULT_IO. */
void fio_fault_arm(long n);

/* Counts one call of another I/O layer (the store's SQLite VFS) in the same
 * counter: 1 when this call is the armed one and must fail, else 0. */
int fio_fault_point(void);

/* open(2), write the whole buffer (retrying short writes and EINTR),
 * fsync(2), close(2), rename(2), unlink(2), mkdir(2): 0 (or the descriptor)
 * on success, -1 with errno on failure, real or injected. fio_close always
 * closes fd. */
int fio_open(const char *path, int flags, mode_t mode);
int fio_write(int fd, const void *buf, size_t len);
int fio_fsync(int fd);
int fio_close(int fd);
int fio_rename(const char *from, const char *to);
int fio_unlink(const char *path);
int fio_mkdir(const char *path, mode_t mode);

MUH_END_DECLS

#endif
