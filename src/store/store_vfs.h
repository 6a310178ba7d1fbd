/*
 * store_vfs.h — the store's fault-countable SQLite VFS (store_vfs.c).
 */
#ifndef MUH_STORE_VFS_H
#define MUH_STORE_VFS_H

#define STORE_VFS_NAME "muh"

/* Registers the "muh" VFS on first use (thread-safe) and returns its name,
 * for sqlite3_open_v2's zVfs; NULL when it cannot be registered (then the
 * caller opens with the default VFS and faults cannot be injected). */
const char *store_vfs_name(void);

#endif
