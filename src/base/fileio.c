/*
 * fileio.c — reading whole files, and the fault-injectable I/O layer of the
 * write-back (see fileio.h).
 *
 * Owns: file_read, the fio_* wrappers and their one fault counter (which
 * the store's VFS, store_vfs.c, counts its writes in too). Must
 * never: decide policy (atomic writes, journals and rollbacks live in
 * patch.c); fail a call that nobody armed a fault for.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "muh/fileio.h"

/* Reads f to its end into a malloc'd, NUL-terminated buffer and sets *len.
 * Returns NULL with errno set on failure: ENOMEM when memory runs out, else
 * the errno of the read that failed (EISDIR for a directory, say), EIO only
 * where the stream failed without one. */
static char *read_all(FILE *f, size_t *len)
{
	size_t cap = 1 << 16, n = 0, r;
	char *b = malloc(cap + 1);
	int err = 0;
	while (b) {
		errno = 0;
		r = fread(b + n, 1, cap - n, f);
		if (ferror(f)) {
			err = errno ? errno : EIO;
			break;
		}
		if (r == 0)
			break;
		n += r;
		if (n == cap) {
			char *nb = realloc(b, (cap *= 2) + 1);
			if (!nb)
				free(b);
			b = nb;
		}
	}
	if (!b) {
		errno = ENOMEM;
		return NULL;
	}
	if (err) {
		free(b);
		errno = err;
		return NULL;
	}
	b[n] = '\0';
	*len = n;
	return b;
}

int file_dir_exists(const char *path)
{
	const char *sl = path ? strrchr(path, '/') : NULL;
	if (!sl)
		return 1;
	char dir[4096];
	struct stat st;
	snprintf(dir, sizeof(dir), "%.*s", (int)(sl - path), path);
	return stat(dir[0] ? dir : "/", &st) == 0 && S_ISDIR(st.st_mode);
}

/* read_all, then closes f; errno is read_all's. */
static char *read_all_and_close(FILE *f, size_t *len)
{
	char *b = read_all(f, len);
	int e = errno;
	fclose(f);
	errno = e;
	return b;
}

char *file_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	return read_all_and_close(f, len);
}

char *file_read_fd(int fd, size_t *len)
{
	int dup_fd = dup(fd);
	if (dup_fd < 0)
		return NULL;
	FILE *f = fdopen(dup_fd, "rb");
	if (!f) {
		close(dup_fd);
		return NULL;
	}
	return read_all_and_close(f, len);
}

/* ---- the fault layer ------------------------------------------------------ */

static long fault_at = -1; /* -1: MUH_FAULT_IO not read yet; 0: disarmed */
static long kill_at;       /* MUH_FAULT_KILL: the call before which muh is killed */
static long ncalls;
static long sleep_ms = -1;

void fio_fault_arm(long n)
{
	fault_at = n > 0 ? n : 0;
	ncalls = 0;
}

/* MUH_FAULT_IO_STATS=1: the count of calls, and whether the armed fault
 * fired, on stderr at exit, so a fault loop knows when it has covered the
 * whole operation. */
static void report_calls(void)
{
	fprintf(stderr, "muh: fault layer: %ld I/O call(s), fault %s\n", ncalls,
		fault_at && ncalls >= fault_at ? "fired" : "not reached");
}

/* Counts one call; true when this one is to fail (errno set to err). With
 * MUH_FAULT_KILL=N the process is killed (SIGKILL, as kill -9) just before
 * its Nth call, so that a test can stop an operation at every point
 * between two I/O calls, in turn, without timing. */
static int fault(int err)
{
	if (fault_at < 0) {
		const char *e = getenv("MUH_FAULT_IO");
		fault_at = e ? atol(e) : 0;
		if (fault_at < 0)
			fault_at = 0;
		const char *k = getenv("MUH_FAULT_KILL");
		kill_at = k ? atol(k) : 0;
		const char *st = getenv("MUH_FAULT_IO_STATS");
		if (st && !strcmp(st, "1"))
			atexit(report_calls);
	}
	ncalls++;
	if (kill_at > 0 && ncalls == kill_at)
		raise(SIGKILL);
	if (fault_at && ncalls == fault_at) {
		errno = err;
		return 1;
	}
	return 0;
}

int fio_fault_point(void)
{
	return fault(EIO);
}

int fio_open(const char *path, int flags, mode_t mode)
{
	if (fault(EIO))
		return -1;
	int fd;
	do
		fd = open(path, flags | O_CLOEXEC, mode);
	while (fd < 0 && errno == EINTR);
	return fd;
}

int fio_write(int fd, const void *buf, size_t len)
{
	if (fault(ENOSPC))
		return -1;
	const char *p = buf;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int fio_fsync(int fd)
{
	if (fault(EIO))
		return -1;
	return fsync(fd);
}

int fio_close(int fd)
{
	if (fault(EIO)) {
		close(fd);
		errno = EIO;
		return -1;
	}
	return close(fd);
}

int fio_rename(const char *from, const char *to)
{
	if (sleep_ms < 0) {
		const char *e = getenv("MUH_FAULT_SLEEP_MS");
		sleep_ms = e ? atol(e) : 0;
	}
	if (sleep_ms > 0) {
		struct timespec ts = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000L};
		nanosleep(&ts, NULL);
	}
	if (fault(EIO))
		return -1;
	return rename(from, to);
}

int fio_unlink(const char *path)
{
	if (fault(EIO))
		return -1;
	return unlink(path);
}

int fio_mkdir(const char *path, mode_t mode)
{
	if (fault(EIO))
		return -1;
	return mkdir(path, mode);
}
