/*
 * patch_apply.c — applying a built plan to the tree, all or nothing
 * (patch_apply): no write whose real path leaves the tree, backups and a
 * journal first, fsync'd temporary files, then renames; on a failure the
 * temporaries go and renamed files are put back. patch_rollback and
 * patch_resume finish or undo an apply that was killed, from its journal.
 *
 * Must never: write a file in place without a temporary file and a rename;
 * touch a file the plan does not change; follow a link out of the tree; print.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "muh/deploy.h"
#include "muh/fileio.h"
#include "muh/muh.h"
#include "muh/patch.h"
#include "strbuf.h"
#include "pyfile.h"

#include <libfyaml.h>
#include <tree_sitter/api.h>
#include "patch_int.h"

/* ---- applying -----------------------------------------------------------------
 * An apply is all or nothing. In order:
 *   1. every target is resolved (its real path and its parent's must lie
 *      inside the tree's real path; a symbolic link is refused unless
 *      follow_symlinks, and then its target must lie inside the tree) and
 *      read again through O_NOFOLLOW (drift while muh worked is refused);
 *   2. the originals are copied to the backup folder (fsync);
 *   3. the journal (backup folder/journal.json: the root, and per file its
 *      target, temporary file, backup, and the original's and the new
 *      content's hashes) is written, fsync'd and renamed into place;
 *   4. every temporary file is written and fsync'd;
 *   5. only then are they renamed over the targets, one by one.
 * A failure in 1-4 removes every temporary file: no file changed. A failure
 * in 5 puts the originals of the files already renamed back. What is left
 * after a kill is finished by patch_resume or undone by patch_rollback,
 * both from the journal and the hashes alone. Every write goes through the
 * fio_* layer (fileio.h), so a test can make any one of them fail. */

void patch_plan_follow_symlinks(muh_patch *p, int on)
{
	p->follow_symlinks = on;
}

/* mkdir -p of the directory part of path. */
static int mkdirs_for(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *q = tmp + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = '\0';
		struct stat st;
		if (stat(tmp, &st) && (fio_mkdir(tmp, 0777) && errno != EEXIST))
			return -1;
		*q = '/';
	}
	return 0;
}

/* Whether the absolute path p is root or lies under it. */
static int inside(const char *root, const char *p)
{
	size_t n = strlen(root);
	if (n == 1 && root[0] == '/')
		return 1;
	return !strncmp(p, root, n) && (p[n] == '/' || p[n] == '\0');
}

/* Removes the file path a failed write left (through the fault layer, and
 * without it when that fails) and returns -1 with errno as the failure
 * left it. */
static int remove_failed(const char *path)
{
	int e = errno;
	if (fio_unlink(path))
		unlink(path);
	errno = e;
	return -1;
}

/* Writes buf to a new file path (O_EXCL, O_NOFOLLOW) with mode, fsync'd.
 * On failure the file is removed; -1 with errno. */
static int write_new(const char *path, const char *buf, size_t len, mode_t mode)
{
	int fd = fio_open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	if (fio_write(fd, buf, len) || fchmod(fd, mode) || fio_fsync(fd)) {
		int e = errno;
		close(fd);
		errno = e;
		return remove_failed(path);
	}
	if (fio_close(fd))
		return remove_failed(path);
	return 0;
}

/* Writes buf to path through path.muh-tmp.<pid> and a rename (fsync'd
 * first). -1 with errno; no temporary file is left. */
static int write_replace(const char *path, const char *buf, size_t len, mode_t mode)
{
	char tmp[PATH_MAX];
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.muh-tmp.%ld", path, (long)getpid()) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	unlink(tmp); /* a stale one of ours */
	if (write_new(tmp, buf, len, mode))
		return -1;
	if (fio_rename(tmp, path))
		return remove_failed(tmp);
	return 0;
}

/* fsyncs the directory holding path (best effort: a rename is durable once
 * its directory is). */
static void sync_dir_of(const char *path)
{
	char dirp[PATH_MAX];
	snprintf(dirp, sizeof(dirp), "%s", path);
	char *sl = strrchr(dirp, '/');
	if (!sl)
		return;
	*sl = sl == dirp ? '/' : '\0';
	if (sl == dirp)
		sl[1] = '\0';
	int fd = open(dirp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* Resolves where root/rel is really written: *out gets the real path (the
 * parent's real path and the file name, or with follow a link's real
 * target). Refuses (MUH_EINPUT) a path outside rootreal, and a symbolic
 * link unless follow. */
static int resolve_target(const char *root, const char *rootreal, const char *rel, int follow,
			  char *out, size_t n, muh_diag *d)
{
	char path[PATH_MAX], parent[PATH_MAX], real[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (rel[0] == '/' || !strcmp(rel, "..") || !strncmp(rel, "../", 3) || strstr(rel, "/../") ||
	    patch_ends_with(rel, "/..")) {
		diag_at(d, path, 0, 0, NULL);
		return diag_errorf(d, "refusing to write: %s is not a path inside the tree", rel);
	}
	struct stat st;
	if (lstat(path, &st)) {
		diag_at(d, path, 0, 0, NULL);
		diag_errorf(d, "cannot stat: %s", strerror(errno));
		return MUH_EENV;
	}
	if (S_ISLNK(st.st_mode)) {
		if (!realpath(path, real)) {
			diag_at(d, path, 0, 0, NULL);
			return diag_errorf(d, "refusing to write: a symbolic link that does not resolve (%s)",
					   strerror(errno));
		}
		if (!follow) {
			diag_at(d, path, 0, 0, NULL);
			return diag_errorf(d, "refusing to write: the file is a symbolic link (to %s); "
					      "muh patch does not replace links with files "
					      "(--follow-symlinks writes the file it points to, "
					      "when that lies inside the tree)",
					   real);
		}
		if (!inside(rootreal, real)) {
			diag_at(d, path, 0, 0, NULL);
			return diag_errorf(d, "refusing to write: the symbolic link points to %s, outside "
					      "the tree %s",
					   real, rootreal);
		}
		snprintf(out, n, "%s", real);
		return MUH_OK;
	}
	snprintf(parent, sizeof(parent), "%s", path);
	char *sl = strrchr(parent, '/');
	*sl = '\0';
	if (!realpath(parent[0] ? parent : "/", real)) {
		diag_at(d, path, 0, 0, NULL);
		diag_errorf(d, "cannot resolve the folder: %s", strerror(errno));
		return MUH_EENV;
	}
	if (!inside(rootreal, real)) {
		diag_at(d, path, 0, 0, NULL);
		return diag_errorf(d, "refusing to write: the file's real path is %s/%s, outside the "
				      "tree %s (a symbolic link to a folder outside)",
				   real, sl + 1, rootreal);
	}
	if ((size_t)snprintf(out, n, "%s/%s", real, sl + 1) >= n) {
		diag_at(d, path, 0, 0, NULL);
		return diag_errorf(d, "path too long");
	}
	return MUH_OK;
}

/* Reads a regular file through O_NOFOLLOW: MUH_OK with *buf, or MUH_EINPUT
 * for a link or a non-regular file, MUH_EENV when unreadable. */
static int read_nofollow(const char *path, char **buf, size_t *len, mode_t *mode, muh_diag *d)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		diag_at(d, path, 0, 0, NULL);
		if (e == ELOOP)
			return diag_errorf(d, "refusing to write: the file became a symbolic link");
		diag_errorf(d, "cannot read: %s", strerror(e));
		return MUH_EENV;
	}
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		diag_at(d, path, 0, 0, NULL);
		return diag_errorf(d, "refusing to write: not a regular file");
	}
	if (mode)
		*mode = st.st_mode & 07777;
	*buf = file_read_fd(fd, len);
	int e = errno;
	close(fd);
	if (!*buf) {
		if (e == ENOMEM)
			return MUH_ENOMEM;
		diag_at(d, path, 0, 0, NULL);
		diag_errorf(d, "cannot read: %s", strerror(e));
		return MUH_EENV;
	}
	return MUH_OK;
}

/* One file of an apply (or of a journal). */
struct target {
	char *rel;
	char path[PATH_MAX]; /* the real path written */
	char tmp[PATH_MAX];
	char bak[PATH_MAX]; /* "" without backup */
	const char *old, *new;
	size_t oldlen, newlen;
	uint64_t oldh, newh;
	mode_t mode;
};

/* Appends ", NAME" (or "NAME") to a list in buf. */
static void list_add(char *buf, size_t n, const char *name)
{
	size_t l = strlen(buf);
	snprintf(buf + l, n - l, "%s%s", l ? ", " : "", name);
}

/* The journal's text: JSON with the root and every target. */
static char *journal_text(const char *rootreal, const struct target *t, size_t nt)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "muh_patch_journal", "1");
	cJSON_AddStringToObject(o, "root", rootreal);
	cJSON *a = cJSON_AddArrayToObject(o, "files");
	for (size_t i = 0; i < nt && a; i++) {
		cJSON *f = cJSON_CreateObject();
		char h[20];
		cJSON_AddStringToObject(f, "rel", t[i].rel);
		cJSON_AddStringToObject(f, "target", t[i].path);
		cJSON_AddStringToObject(f, "tmp", t[i].tmp);
		cJSON_AddStringToObject(f, "backup", t[i].bak);
		snprintf(h, sizeof(h), "%016llx", (unsigned long long)t[i].oldh);
		cJSON_AddStringToObject(f, "old_fnv1a64", h);
		snprintf(h, sizeof(h), "%016llx", (unsigned long long)t[i].newh);
		cJSON_AddStringToObject(f, "new_fnv1a64", h);
		cJSON_AddNumberToObject(f, "mode", (double)t[i].mode);
		cJSON_AddItemToArray(a, f);
	}
	char *s = cJSON_Print(o);
	cJSON_Delete(o);
	return s;
}

/* Removes the temporary files of t[from..nt). */
static void remove_temps(struct target *t, size_t from, size_t nt)
{
	for (size_t i = from; i < nt; i++)
		if (fio_unlink(t[i].tmp) && errno != ENOENT)
			unlink(t[i].tmp); /* the injected fault is spent: this one works */
}

/* Removes what an apply that changed no file wrote into backup_dir: the
 * journal (jpath, "" when not begun), the backups, the folders made for
 * them when empty, and TREE/.muh-backup when that is left empty too (the
 * CLI's default place), so that a refused apply leaves nothing behind. */
static void undo_backups(const struct target *t, size_t nt, const char *backup_dir, const char *jpath)
{
	if (!backup_dir)
		return;
	if (jpath[0])
		unlink(jpath);
	size_t bl = strlen(backup_dir);
	for (size_t i = 0; i < nt; i++) {
		if (!t[i].bak[0])
			continue;
		unlink(t[i].bak);
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", t[i].bak);
		for (char *sl = strrchr(dir, '/'); sl && (size_t)(sl - dir) > bl; sl = strrchr(dir, '/')) {
			*sl = '\0';
			if (rmdir(dir))
				break;
		}
	}
	if (rmdir(backup_dir) == 0) {
		char up[PATH_MAX];
		snprintf(up, sizeof(up), "%s", backup_dir);
		char *sl = strrchr(up, '/');
		if (sl) {
			*sl = '\0';
			const char *base = strrchr(up, '/');
			base = base ? base + 1 : up;
			if (!strcmp(base, ".muh-backup"))
				rmdir(up);
		}
	}
}

int patch_apply(const muh_patch *p, const char *backup_dir, int *nwritten, muh_diag *d)
{
	*nwritten = 0;
	char rootreal[PATH_MAX];
	if (!realpath(p->root, rootreal)) {
		diag_at(d, p->root, 0, 0, NULL);
		diag_errorf(d, "cannot resolve the tree: %s", strerror(errno));
		return MUH_EENV;
	}
	struct target *t = calloc(p->nfiles ? p->nfiles : 1, sizeof(*t));
	char **cur = calloc(p->nfiles ? p->nfiles : 1, sizeof(char *));
	if (!t || !cur) {
		free(t);
		free(cur);
		return MUH_ENOMEM;
	}
	size_t nt = 0;
	int rc = MUH_OK;
	/* 1. resolve and read every target again */
	for (size_t i = 0; i < p->nfiles && !rc; i++) {
		const struct pfile *f = &p->files[i];
		struct target *x = &t[nt];
		rc = resolve_target(p->root, rootreal, f->rel, p->follow_symlinks, x->path,
				    sizeof(x->path), d);
		size_t curlen = 0;
		if (!rc)
			rc = read_nofollow(x->path, &cur[nt], &curlen, &x->mode, d);
		if (rc)
			break;
		int same = curlen == f->newlen && !memcmp(cur[nt], f->new, curlen);
		int drift = !(curlen == f->oldlen && !memcmp(cur[nt], f->old, curlen));
		free(cur[nt]);
		cur[nt] = NULL;
		if (same)
			continue; /* already applied */
		if (drift) {
			diag_at(d, x->path, 0, 0, NULL);
			rc = diag_errorf(d, "refusing to write: the file changed while muh was working; "
					    "no file changed");
			break;
		}
		for (size_t k = 0; k < nt; k++)
			if (!strcmp(t[k].path, x->path)) {
				diag_at(d, x->path, 0, 0, NULL);
				rc = diag_errorf(d, "refusing to write: %s and %s are the same file",
						 t[k].rel, f->rel);
			}
		if (rc)
			break;
		x->rel = f->rel;
		x->old = f->old;
		x->oldlen = f->oldlen;
		x->new = f->new;
		x->newlen = f->newlen;
		x->oldh = patch_fnv1a64(f->old, f->oldlen);
		x->newh = patch_fnv1a64(f->new, f->newlen);
		if ((size_t)snprintf(x->tmp, sizeof(x->tmp), "%s.muh-tmp.%ld.%zu", x->path,
				     (long)getpid(), nt) >= sizeof(x->tmp) ||
		    (backup_dir && (size_t)snprintf(x->bak, sizeof(x->bak), "%s/%s", backup_dir,
						    f->rel) >= sizeof(x->bak))) {
			diag_at(d, x->path, 0, 0, NULL);
			rc = diag_errorf(d, "path too long");
			break;
		}
		nt++;
	}
	free(cur);
	if (rc || !nt) {
		free(t);
		return rc;
	}
	/* 2. backups, 3. the journal (both removed again when the apply fails
	 * with no file changed: undo_backups) */
	char jpath[PATH_MAX] = "";
	for (size_t i = 0; i < nt && backup_dir && !rc; i++) {
		unlink(t[i].bak); /* a backup folder given twice: the newest originals */
		if (mkdirs_for(t[i].bak) || write_new(t[i].bak, t[i].old, t[i].oldlen, t[i].mode)) {
			diag_at(d, t[i].bak, 0, 0, NULL);
			diag_errorf(d, "cannot write the backup: %s; no file changed", strerror(errno));
			rc = MUH_EENV;
		}
	}
	if (!rc && backup_dir) {
		char *j = journal_text(rootreal, t, nt);
		snprintf(jpath, sizeof(jpath), "%s/journal.json", backup_dir);
		if (!j)
			rc = MUH_ENOMEM;
		else if (write_replace(jpath, j, strlen(j), 0644)) {
			diag_at(d, jpath, 0, 0, NULL);
			diag_errorf(d, "cannot write the journal: %s; no file changed", strerror(errno));
			rc = MUH_EENV;
		}
		free(j);
		if (!rc)
			sync_dir_of(jpath);
	}
	/* 4. every temporary file */
	size_t ntmp = 0;
	for (; ntmp < nt && !rc; ntmp++) {
		unlink(t[ntmp].tmp);
		if (write_new(t[ntmp].tmp, t[ntmp].new, t[ntmp].newlen, t[ntmp].mode)) {
			diag_at(d, t[ntmp].path, 0, 0, NULL);
			diag_errorf(d, "cannot write %s: %s; no file changed", t[ntmp].tmp,
				    strerror(errno));
			rc = MUH_EENV;
			break;
		}
	}
	if (rc) {
		remove_temps(t, 0, ntmp);
		undo_backups(t, nt, backup_dir, jpath);
		free(t);
		return rc;
	}
	/* 5. the renames */
	size_t done = 0;
	for (; done < nt; done++)
		if (fio_rename(t[done].tmp, t[done].path))
			break;
	if (done < nt) {
		int e = errno;
		remove_temps(t, done, nt);
		char changed[MUH_DIAG_MSG / 2] = "", restored[MUH_DIAG_MSG / 2] = "";
		for (size_t k = 0; k < done; k++) {
			if (write_replace(t[k].path, t[k].old, t[k].oldlen, t[k].mode))
				list_add(changed, sizeof(changed), t[k].rel);
			else
				list_add(restored, sizeof(restored), t[k].rel);
		}
		diag_at(d, t[done].path, 0, 0, NULL);
		if (!changed[0])
			undo_backups(t, nt, backup_dir, jpath);
		if (!changed[0])
			diag_errorf(d, "cannot rename %s into place: %s; no file changed%s%s%s",
				    t[done].tmp, strerror(e), restored[0] ? " (put back: " : "",
				    restored, restored[0] ? ")" : "");
		else
			diag_errorf(d, "cannot rename %s into place: %s; files changed (patched): %s; "
				       "restore them with `muh patch --rollback %s`",
				    t[done].tmp, strerror(e), changed, backup_dir ? backup_dir : "DIR");
		free(t);
		return MUH_EENV;
	}
	for (size_t k = 0; k < nt; k++)
		sync_dir_of(t[k].path);
	*nwritten = (int)nt;
	free(t);
	return MUH_OK;
}

/* ---- recovery from the journal -------------------------------------------- */

/* Loads backup_dir/journal.json into t (rel malloc'd; old/new unset). */
static int journal_load(const char *backup_dir, char *rootreal, size_t rn, struct target **out,
			size_t *n, muh_diag *d)
{
	char jpath[PATH_MAX];
	snprintf(jpath, sizeof(jpath), "%s/journal.json", backup_dir);
	*out = NULL;
	*n = 0;
	char *text;
	size_t len;
	int rc = patch_slurp_input(jpath, &text, &len, d);
	if (rc)
		return rc;
	cJSON *o = cJSON_ParseWithLength(text, len);
	free(text);
	const cJSON *root = cJSON_GetObjectItemCaseSensitive(o, "root");
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(o, "files");
	if (!o || !cJSON_IsString(root) || !cJSON_IsArray(files)) {
		cJSON_Delete(o);
		diag_at(d, jpath, 0, 0, NULL);
		return diag_errorf(d, "not a muh patch journal");
	}
	snprintf(rootreal, rn, "%s", root->valuestring);
	int nf = cJSON_GetArraySize(files);
	struct target *t = calloc((size_t)(nf ? nf : 1), sizeof(*t));
	if (!t) {
		cJSON_Delete(o);
		return MUH_ENOMEM;
	}
	const cJSON *f;
	size_t k = 0;
	cJSON_ArrayForEach(f, files)
	{
		const char *keys[] = {"rel", "target", "tmp", "backup", "old_fnv1a64", "new_fnv1a64"};
		const char *v[6];
		for (int i = 0; i < 6; i++) {
			const cJSON *x = cJSON_GetObjectItemCaseSensitive(f, keys[i]);
			v[i] = cJSON_IsString(x) ? x->valuestring : NULL;
		}
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(f, "mode");
		if (!v[0] || !v[1] || !v[2] || !v[3] || !v[4] || !v[5] || !cJSON_IsNumber(m) ||
		    !inside(rootreal, v[1]) || !(t[k].rel = strdup(v[0]))) {
			rc = diag_errorf(d, "a malformed entry in %s", jpath);
			break;
		}
		snprintf(t[k].path, sizeof(t[k].path), "%s", v[1]);
		snprintf(t[k].tmp, sizeof(t[k].tmp), "%s", v[2]);
		snprintf(t[k].bak, sizeof(t[k].bak), "%s", v[3]);
		t[k].oldh = strtoull(v[4], NULL, 16);
		t[k].newh = strtoull(v[5], NULL, 16);
		t[k].mode = (mode_t)m->valuedouble & 07777;
		k++;
	}
	cJSON_Delete(o);
	*out = t;
	*n = k;
	if (rc)
		diag_at(d, jpath, 0, 0, NULL);
	return rc;
}

static void targets_free(struct target *t, size_t n)
{
	for (size_t i = 0; t && i < n; i++)
		free(t[i].rel);
	free(t);
}

/* The hash of a file read through O_NOFOLLOW; 1 when readable. */
static int hash_of(const char *path, uint64_t *h)
{
	char *b;
	size_t n;
	muh_diag dd;
	if (read_nofollow(path, &b, &n, NULL, &dd))
		return 0;
	*h = patch_fnv1a64(b, n);
	free(b);
	return 1;
}

/* Where each file of a journal stands: 'o' original, 'n' patched, '?' neither
 * (or unreadable); tmp_ok: its temporary file holds the new content. */
static int journal_state(struct target *t, size_t n, char *state, int *tmp_ok, muh_diag *d)
{
	char bad[MUH_DIAG_MSG / 2] = "";
	for (size_t i = 0; i < n; i++) {
		uint64_t h = 0, th = 0;
		state[i] = !hash_of(t[i].path, &h) ? '?' : h == t[i].newh ? 'n' : h == t[i].oldh ? 'o' : '?';
		tmp_ok[i] = hash_of(t[i].tmp, &th) && th == t[i].newh;
		if (state[i] == '?')
			list_add(bad, sizeof(bad), t[i].rel);
	}
	if (bad[0])
		return diag_errorf(d, "refusing: these files hold neither the original nor the patched "
				      "content (changed since the apply?): %s; nothing was changed",
				   bad);
	return MUH_OK;
}

/* Loads the journal of backup_dir and the state of each file it names
 * (journal_state): what --rollback and --resume both start from. state and
 * tmp_ok are calloc'd (n + 1 each) whatever the result; the caller frees
 * them and the targets. */
static int journal_open(const char *backup_dir, char *rootreal, size_t rn, struct target **t, size_t *n,
			char **state, int **tmp_ok, muh_diag *d)
{
	int rc = journal_load(backup_dir, rootreal, rn, t, n, d);
	*state = calloc(*n + 1, 1);
	*tmp_ok = calloc(*n + 1, sizeof(int));
	if (!rc && (!*state || !*tmp_ok))
		rc = MUH_ENOMEM;
	if (!rc)
		rc = journal_state(*t, *n, *state, *tmp_ok, d);
	return rc;
}

/* An apply killed after writing its journal's temporary file and before
 * the rename that makes it backup_dir/journal.json has changed no file of
 * the tree (nothing is written there before the journal is in place). True
 * when that is so: the journal's temporary files are removed (counted in
 * r->tmp_removed) and there is nothing else to do. */
static int journal_unfinished(const char *backup_dir, patch_recovery *r)
{
	char jpath[PATH_MAX];
	struct stat sb;
	snprintf(jpath, sizeof(jpath), "%s/journal.json", backup_dir);
	if (lstat(jpath, &sb) == 0 || errno != ENOENT)
		return 0;
	DIR *dir = opendir(backup_dir);
	if (!dir)
		return 0;
	struct dirent *e;
	int found = 0;
	while ((e = readdir(dir))) {
		if (strncmp(e->d_name, "journal.json.muh-tmp.", 21))
			continue;
		found = 1;
		snprintf(jpath, sizeof(jpath), "%s/%s", backup_dir, e->d_name);
		if (fio_unlink(jpath) == 0)
			r->tmp_removed++;
	}
	closedir(dir);
	if (found)
		r->incomplete = 1;
	return found;
}

/* What --rollback or --resume does with an opened journal: its n targets t,
 * their state ('n': the new content is in place) and whether each one's
 * temporary file is complete (tmp_ok). Fills r; returns a MUH_ status. */
typedef int (*journal_step)(const char *backup_dir, patch_recovery *r, struct target *t, size_t n,
			    const char *state, const int *tmp_ok, muh_diag *d);

/* The frame of both recoveries: clears r, finishes an apply killed before
 * its journal was in place (journal_unfinished), else opens the journal,
 * sets r->files and runs step on it, then frees the journal. */
static int recover_with_journal(const char *backup_dir, patch_recovery *r, journal_step step, muh_diag *d)
{
	memset(r, 0, sizeof(*r));
	if (journal_unfinished(backup_dir, r))
		return MUH_OK;
	char rootreal[PATH_MAX];
	struct target *t;
	size_t n;
	char *state;
	int *tmp_ok;
	int rc = journal_open(backup_dir, rootreal, sizeof(rootreal), &t, &n, &state, &tmp_ok, d);
	r->files = (int)n;
	if (!rc)
		rc = step(backup_dir, r, t, n, state, tmp_ok, d);
	free(state);
	free(tmp_ok);
	targets_free(t, n);
	return rc;
}

/* --rollback: every backup is checked before the first original is written
 * back. */
static int rollback_step(const char *backup_dir, patch_recovery *r, struct target *t, size_t n,
			 const char *state, const int *tmp_ok, muh_diag *d)
{
	(void)tmp_ok;
	int rc = MUH_OK;
	char **orig = calloc(n + 1, sizeof(char *));
	size_t *olen = calloc(n + 1, sizeof(size_t));
	if (!rc && (!orig || !olen))
		rc = MUH_ENOMEM;
	/* every backup needed must be there and intact before anything is written */
	for (size_t i = 0; i < n && !rc; i++) {
		if (state[i] != 'n')
			continue;
		rc = read_nofollow(t[i].bak, &orig[i], &olen[i], NULL, d);
		if (!rc && patch_fnv1a64(orig[i], olen[i]) != t[i].oldh) {
			diag_at(d, t[i].bak, 0, 0, NULL);
			rc = diag_errorf(d, "the backup does not hold the original (its hash differs); "
					    "nothing was changed");
		}
	}
	char failed[MUH_DIAG_MSG / 2] = "";
	int e = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if (fio_unlink(t[i].tmp) == 0)
			r->tmp_removed++;
		if (state[i] == 'n') {
			if (write_replace(t[i].path, orig[i], olen[i], t[i].mode)) {
				e = errno;
				list_add(failed, sizeof(failed), t[i].rel);
				r->patched++;
				continue;
			}
			r->changed++;
		}
		r->original++;
	}
	if (!rc && failed[0]) {
		diag_at(d, backup_dir, 0, 0, NULL);
		rc = diag_errorf(d, "cannot restore %s: %s; run --rollback again", failed, strerror(e));
		rc = MUH_EENV;
	}
	for (size_t i = 0; orig && i < n; i++)
		free(orig[i]);
	free(orig);
	free(olen);
	return rc;
}

int patch_rollback(const char *backup_dir, patch_recovery *r, muh_diag *d)
{
	return recover_with_journal(backup_dir, r, rollback_step, d);
}

/* --resume: renames the complete temporary files into place, or, stopped
 * before the first rename, removes them. */
static int resume_step(const char *backup_dir, patch_recovery *r, struct target *t, size_t n,
		       const char *state, const int *tmp_ok, muh_diag *d)
{
	int rc = MUH_OK;
	int complete = 1, anynew = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		complete &= state[i] == 'n' || tmp_ok[i];
		anynew |= state[i] == 'n';
	}
	if (!rc && !complete) {
		if (anynew) {
			diag_at(d, backup_dir, 0, 0, NULL);
			rc = diag_errorf(d, "cannot finish: some files are patched but the temporary file "
					    "of another is missing or incomplete; undo it with `muh patch "
					    "--rollback %s`",
					 backup_dir);
		} else {
			/* stopped before the renames: the tree has the originals */
			for (size_t i = 0; i < n; i++)
				if (!fio_unlink(t[i].tmp))
					r->tmp_removed++;
			r->original = (int)n;
			r->incomplete = 1;
		}
	} else if (!rc) {
		char failed[MUH_DIAG_MSG / 2] = "";
		int e = 0;
		for (size_t i = 0; i < n; i++) {
			if (state[i] == 'n') {
				if (!fio_unlink(t[i].tmp))
					r->tmp_removed++;
				r->patched++;
			} else if (fio_rename(t[i].tmp, t[i].path)) {
				e = errno;
				list_add(failed, sizeof(failed), t[i].rel);
				r->original++;
			} else {
				sync_dir_of(t[i].path);
				r->changed++;
				r->patched++;
			}
		}
		if (failed[0]) {
			diag_at(d, backup_dir, 0, 0, NULL);
			diag_errorf(d, "cannot rename %s into place: %s; run --resume again (or --rollback)",
				    failed, strerror(e));
			rc = MUH_EENV;
		}
	}
	return rc;
}

int patch_resume(const char *backup_dir, patch_recovery *r, muh_diag *d)
{
	return recover_with_journal(backup_dir, r, resume_step, d);
}
