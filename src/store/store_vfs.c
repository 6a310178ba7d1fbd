/*
 * store_vfs.c — the store's I/O layer: an SQLite VFS that passes every call
 * to the default VFS and counts each write, sync and truncate in the same
 * fault counter as the write-back's fio_* calls (fileio.c).
 *
 * Why: issue 17 asks for SQLite-style fault injection over the store's
 * writes: a test arms MUH_FAULT_IO=N, the Nth counted call fails once
 * (SQLITE_FULL for a write, SQLITE_IOERR_* otherwise), and the test checks
 * that nothing already stored was lost. Every store muh opens goes through
 * this VFS, armed or not, so the layer under test is the one users run.
 *
 * Owns: the "muh" VFS (registered once, not as the default) and its file
 * wrapper. Must never: change what a call does when no fault is armed;
 * count reads (a failed read proves nothing about durability).
 */
#include <pthread.h>
#include <string.h>

#include <sqlite3.h>

#include "muh/fileio.h"
#include "store_vfs.h"

typedef struct {
	sqlite3_file base; /* our methods */
	sqlite3_file *real; /* the default VFS's file, allocated right after */
} fault_file;

static sqlite3_vfs fault_vfs;
static sqlite3_io_methods fault_methods;

#define REAL(f) (((fault_file *)(f))->real)

static int f_close(sqlite3_file *f)
{
	int rc = REAL(f)->pMethods ? REAL(f)->pMethods->xClose(REAL(f)) : SQLITE_OK;
	f->pMethods = NULL;
	return rc;
}

static int f_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
	return REAL(f)->pMethods->xRead(REAL(f), buf, n, off);
}

static int f_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
	if (fio_fault_point())
		return SQLITE_FULL;
	return REAL(f)->pMethods->xWrite(REAL(f), buf, n, off);
}

static int f_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	if (fio_fault_point())
		return SQLITE_IOERR_TRUNCATE;
	return REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int f_sync(sqlite3_file *f, int flags)
{
	if (fio_fault_point())
		return SQLITE_IOERR_FSYNC;
	return REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int f_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int f_lock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xLock(REAL(f), l);
}

static int f_unlock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xUnlock(REAL(f), l);
}

static int f_check_lock(sqlite3_file *f, int *out)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int f_control(sqlite3_file *f, int op, void *arg)
{
	return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int f_sector(sqlite3_file *f)
{
	return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int f_caps(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int f_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
	return REAL(f)->pMethods->xShmMap(REAL(f), pg, pgsz, extend, pp);
}

static int f_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
	return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}

static void f_shm_barrier(sqlite3_file *f)
{
	REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int f_shm_unmap(sqlite3_file *f, int del)
{
	return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

static int f_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp)
{
	return REAL(f)->pMethods->xFetch(REAL(f), off, n, pp);
}

static int f_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	return REAL(f)->pMethods->xUnfetch(REAL(f), off, p);
}

/* Opens through the default VFS; the wrapper offers exactly the methods
 * (and the version) the real file has. */
static int v_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags)
{
	sqlite3_vfs *root = vfs->pAppData;
	fault_file *ff = (fault_file *)f;
	ff->real = (sqlite3_file *)(ff + 1);
	memset(ff->real, 0, (size_t)root->szOsFile);
	f->pMethods = NULL;
	int rc = root->xOpen(root, name, ff->real, flags, out_flags);
	if (ff->real->pMethods) {
		const sqlite3_io_methods *m = ff->real->pMethods;
		fault_methods.iVersion = m->iVersion < 3 ? m->iVersion : 3;
		f->pMethods = &fault_methods;
	}
	return rc;
}

static int v_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	sqlite3_vfs *root = vfs->pAppData;
	if (fio_fault_point())
		return SQLITE_IOERR_DELETE;
	return root->xDelete(root, name, sync_dir);
}

static int v_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xAccess(root, name, flags, out);
}

static int v_fullpath(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xFullPathname(root, name, n, out);
}

static void *v_dlopen(sqlite3_vfs *vfs, const char *name)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xDlOpen(root, name);
}

static void v_dlerror(sqlite3_vfs *vfs, int n, char *msg)
{
	sqlite3_vfs *root = vfs->pAppData;
	root->xDlError(root, n, msg);
}

static void (*v_dlsym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xDlSym(root, h, sym);
}

static void v_dlclose(sqlite3_vfs *vfs, void *h)
{
	sqlite3_vfs *root = vfs->pAppData;
	root->xDlClose(root, h);
}

static int v_random(sqlite3_vfs *vfs, int n, char *out)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xRandomness(root, n, out);
}

static int v_sleep(sqlite3_vfs *vfs, int us)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xSleep(root, us);
}

static int v_time(sqlite3_vfs *vfs, double *out)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xCurrentTime(root, out);
}

static int v_last_error(sqlite3_vfs *vfs, int n, char *out)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xGetLastError ? root->xGetLastError(root, n, out) : 0;
}

static int v_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xCurrentTimeInt64(root, out);
}

static int registered; /* 1: fault_vfs is registered; -1: it could not be */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void register_vfs(void)
{
	sqlite3_vfs *root = sqlite3_vfs_find(NULL);
	if (!root || root->iVersion < 2) {
		registered = -1;
		return;
	}
	fault_methods = (sqlite3_io_methods){
		.iVersion = 3, .xClose = f_close, .xRead = f_read, .xWrite = f_write,
		.xTruncate = f_truncate, .xSync = f_sync, .xFileSize = f_size, .xLock = f_lock,
		.xUnlock = f_unlock, .xCheckReservedLock = f_check_lock, .xFileControl = f_control,
		.xSectorSize = f_sector, .xDeviceCharacteristics = f_caps, .xShmMap = f_shm_map,
		.xShmLock = f_shm_lock, .xShmBarrier = f_shm_barrier, .xShmUnmap = f_shm_unmap,
		.xFetch = f_fetch, .xUnfetch = f_unfetch,
	};
	fault_vfs = (sqlite3_vfs){
		.iVersion = 2, .szOsFile = (int)sizeof(fault_file) + root->szOsFile,
		.mxPathname = root->mxPathname, .zName = STORE_VFS_NAME, .pAppData = root,
		.xOpen = v_open, .xDelete = v_delete, .xAccess = v_access, .xFullPathname = v_fullpath,
		.xDlOpen = v_dlopen, .xDlError = v_dlerror, .xDlSym = v_dlsym, .xDlClose = v_dlclose,
		.xRandomness = v_random, .xSleep = v_sleep, .xCurrentTime = v_time,
		.xGetLastError = v_last_error, .xCurrentTimeInt64 = v_time64,
	};
	registered = sqlite3_vfs_register(&fault_vfs, 0) == SQLITE_OK ? 1 : -1;
}

const char *store_vfs_name(void)
{
	pthread_once(&once, register_vfs);
	return registered == 1 ? STORE_VFS_NAME : NULL;
}
