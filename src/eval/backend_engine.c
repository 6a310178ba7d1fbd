/*
 * backend_engine.c — the engine backend: a real inference server per
 * variant, launched from its deployment file and driven by muh's load
 * generator (docs/engine.md).
 *
 * Owns, per variant, inside the evaluator's runner:
 *
 *   build    the variant's values are written into a copy of the launch
 *            file by deploy_set, the code `muh patch` writes the winner
 *            with (so what is measured is what ships), plus a free port;
 *            the server is started from that copy in its own process group
 *            (cwd: the launch file's folder, its env: entries exported, its
 *            output in a log) and waited for: an HTTP probe or a log line.
 *            It exiting first, or not being ready in time, is launch_error
 *            with the last lines of its log. The fingerprint is the hash of
 *            the argv and env the server got; the detail adds what the
 *            server itself reports (target.props, e.g. llama.cpp's /props
 *            with its slots and context), which proves the values arrived.
 *   time     one run of the load per sample; the sample is seconds per
 *            output token (the reciprocal of output tokens/s), and every
 *            load metric goes into the measurement's metrics (the median
 *            over the samples). With load.find_rate a sample is the highest
 *            rate within the load's SLOs; when none met them, the run at
 *            the load run that missed them by least, its rate_slo_miss
 *            saying how far (a measured miss, not a failure). Failed requests and truncated completions
 *            make the variant wrong_result with their counts; a server that
 *            died during the load is crash (its signal or exit status); one
 *            that did not answer in time is timeout (every failed request
 *            past load.request_timeout, or none answered and some past it).
 *   release  SIGTERM to the group, SIGKILL after target.stop_grace, every
 *            process of the group reaped; one that survives is reported.
 *
 * The runner is a child subreaper, so a server's own children that outlive
 * it are reaped here too; the server's leader dies with the runner
 * (PR_SET_PDEATHSIG) should the evaluator kill the runner on a timeout.
 * Every process below the runner is the server's (the runner starts
 * nothing else), so release signals the whole tree as /proc shows it, a
 * child that left the group with setsid included, and checks that none
 * is left.
 *
 * No number is believed because a port answered: once ready, the listener
 * on the variant's port must be a socket of a process in the server's tree
 * (/proc/net/tcp{,6} inode against /proc/PID/fd); someone else's listener
 * (a process that took a fixed port between the check and the server's
 * bind) is launch_error, and nothing is measured.
 */
#include "curl_dl.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "muh/deploy.h"
#include "muh/engine.h"
#include "muh/eval.h"
#include "eval_int.h"
#include "muh/load.h"
#include "muh/muh.h"
#include "muh/stats.h"

#define ENG_MAX_REPEATS 64
#define ENG_MAX_METRICS 64

/* One server, from build to release. */
typedef struct engine_server {
	pid_t pid;       /* the group leader; 0 once reaped */
	pid_t pgid;      /* its process group (the leader's pid), kept after it is reaped */
	int status;      /* its wait status once reaped */
	int port;
	char url[128];
	char dir[EVAL_PATH + 32]; /* the variant's folder: launch copy, log */
	char log[EVAL_PATH + 48];
	load_opts load;
	size_t nrep;     /* load runs so far */
	int usage_runs;  /* of them, those whose usage blocks gave a count (usage_requests) */
	int usage_short; /* ... and of those, the ones too short to judge them (usage_checked 0) */
	size_t nmetrics;
	const char *names[ENG_MAX_METRICS];
	double vals[ENG_MAX_REPEATS][ENG_MAX_METRICS];
} engine_server;

static const char *const *metric_names(void)
{
	static const char *names[ENG_MAX_METRICS + 1];
	if (!names[0]) {
		load_result r;
		memset(&r, 0, sizeof(r));
		double v[ENG_MAX_METRICS];
		size_t n = load_metrics(&r, names, v, ENG_MAX_METRICS);
		names[n] = NULL;
	}
	return names;
}

const char *const *eval_backend_metrics(const char *backend)
{
	return backend && !strcmp(backend, "engine") ? metric_names() : NULL;
}

/* The last `lines` lines of the log (at most 1.5 KiB), into buf. */
static void log_tail(const char *path, int lines, char *buf, size_t n)
{
	buf[0] = '\0';
	FILE *f = fopen(path, "rb");
	if (!f)
		return;
	char tail[1536];
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	long from = size > (long)sizeof(tail) - 1 ? size - (long)sizeof(tail) + 1 : 0;
	fseek(f, from, SEEK_SET);
	size_t got = fread(tail, 1, sizeof(tail) - 1, f);
	fclose(f);
	tail[got] = '\0';
	while (got && (tail[got - 1] == '\n' || tail[got - 1] == '\r'))
		tail[--got] = '\0';
	size_t start = got;
	for (int k = 0; start > 0; start--)
		if (tail[start - 1] == '\n' && ++k == lines)
			break;
	size_t k = strlen(tail + start);
	if (k >= n)
		k = n - 1;
	memcpy(buf, tail + start, k);
	buf[k] = '\0';
	for (char *p = buf; *p; p++)
		if (*p == '\n')
			*p = '|'; /* one line in the error text; '|' parts the server's lines */
}

/* A port nobody listens on now, or 0. */
static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return 0;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int port = 0;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* 1 when something already accepts connections on 127.0.0.1:port. */
static int port_taken(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return 0;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int taken = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return taken;
}

/* Reaps the leader if it has exited; 1 when it has. */
static int leader_exited(engine_server *sv)
{
	if (!sv->pid)
		return 1;
	int st;
	pid_t r = waitpid(sv->pid, &st, WNOHANG);
	if (r == sv->pid || (r < 0 && errno == ECHILD)) {
		sv->status = r == sv->pid ? st : 0;
		sv->pid = 0;
		return 1;
	}
	return 0;
}

/* ---- the server's process tree, from /proc ------------------------------ */

/* Every process below root (its children, theirs, ...), into out[0..max);
 * returns how many (at most max). */
static size_t descendants(pid_t root, pid_t *out, size_t max)
{
	size_t cap = 1024, n = 0, found = 0;
	pid_t *pid = malloc(cap * sizeof(pid_t)), *ppid = malloc(cap * sizeof(pid_t));
	DIR *dir = opendir("/proc");
	if (!pid || !ppid || !dir) {
		free(pid);
		free(ppid);
		if (dir)
			closedir(dir);
		return 0;
	}
	struct dirent *e;
	while ((e = readdir(dir))) {
		char *end;
		long p = strtol(e->d_name, &end, 10);
		if (*end || p <= 0)
			continue;
		char path[64], buf[512];
		snprintf(path, sizeof(path), "/proc/%ld/stat", p);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t k = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[k] = '\0';
		char *rp = strrchr(buf, ')'); /* the name may hold spaces and ')' */
		char state;
		int pp;
		if (!rp || sscanf(rp + 1, " %c %d", &state, &pp) != 2 || state == 'Z')
			continue;
		if (n == cap) {
			pid_t *a = realloc(pid, 2 * cap * sizeof(pid_t)), *b = a ? realloc(ppid, 2 * cap * sizeof(pid_t)) : NULL;
			if (a)
				pid = a;
			if (!a || !b)
				break;
			ppid = b;
			cap *= 2;
		}
		pid[n] = (pid_t)p;
		ppid[n++] = (pid_t)pp;
	}
	closedir(dir);
	/* breadth first: out[] is the frontier and the answer */
	size_t head = 0;
	pid_t cur = root;
	for (;;) {
		for (size_t i = 0; i < n && found < max; i++)
			if (ppid[i] == cur)
				out[found++] = pid[i];
		if (head == found)
			break;
		cur = out[head++];
	}
	free(pid);
	free(ppid);
	return found;
}

/* Sends sig to every process below the runner (all of them the server's). */
static size_t signal_tree(int sig)
{
	pid_t tree[4096];
	size_t n = descendants(getpid(), tree, 4096);
	for (size_t i = 0; i < n; i++)
		kill(tree[i], sig);
	return n;
}

/* The socket inodes listening on TCP port `port` (IPv4 and IPv6), into
 * out[0..max); returns how many. */
static size_t listeners(int port, unsigned long *out, size_t max)
{
	static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
	size_t n = 0;
	for (size_t k = 0; k < 2; k++) {
		FILE *f = fopen(files[k], "r");
		char line[512];
		if (!f)
			continue;
		if (!fgets(line, sizeof(line), f)) { /* the header */
			fclose(f);
			continue;
		}
		while (n < max && fgets(line, sizeof(line), f)) {
			char local[128];
			unsigned st;
			unsigned long inode;
			/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
			if (sscanf(line, " %*s %127s %*s %x %*s %*s %*s %*s %*s %lu", local, &st, &inode) != 3)
				continue;
			char *colon = strrchr(local, ':');
			if (st != 0x0A || !colon || strtol(colon + 1, NULL, 16) != port)
				continue;
			*colon = '\0';
			/* what a probe of 127.0.0.1 reaches: loopback or the wildcard,
			 * in IPv4 or IPv6 (a v4-mapped or dual-stack socket); a listener
			 * on another address of this host is someone else's business */
			static const char *const reach[] = {"00000000", "0100007F",
							    "00000000000000000000000000000000",
							    "00000000000000000000000001000000",
							    "0000000000000000FFFF00000100007F",
							    "0000000000000000FFFF000000000000"};
			for (size_t r = 0; r < sizeof(reach) / sizeof(reach[0]); r++)
				if (!strcasecmp(local, reach[r])) {
					out[n++] = inode;
					break;
				}
		}
		fclose(f);
	}
	return n;
}

/* 1 when process pid holds socket inode. */
static int holds_socket(pid_t pid, unsigned long inode)
{
	char path[64], want[64], link[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	DIR *dir = opendir(path);
	if (!dir)
		return 0;
	struct dirent *e;
	int hit = 0;
	while (!hit && (e = readdir(dir))) {
		char fd[320];
		snprintf(fd, sizeof(fd), "%s/%s", path, e->d_name);
		ssize_t k = readlink(fd, link, sizeof(link) - 1);
		if (k > 0) {
			link[k] = '\0';
			hit = !strcmp(link, want);
		}
	}
	closedir(dir);
	return hit;
}

/* The process (pid and name) that holds inode, among all of /proc; 0 when
 * none can be seen (another user's processes hide their fds). */
static pid_t socket_owner(unsigned long inode, char *comm, size_t n)
{
	DIR *dir = opendir("/proc");
	struct dirent *e;
	pid_t who = 0;
	comm[0] = '\0';
	while (dir && !who && (e = readdir(dir))) {
		char *end;
		long p = strtol(e->d_name, &end, 10);
		if (!*end && p > 0 && holds_socket((pid_t)p, inode))
			who = (pid_t)p;
	}
	if (dir)
		closedir(dir);
	if (who) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)who);
		FILE *f = fopen(path, "r");
		if (f) {
			if (fgets(comm, (int)n, f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
	}
	return who;
}

/* 0 when every listener on sv's port belongs to the server's tree (the
 * runner's descendants); 1 when nothing listens there (yet); -1 with m
 * failed (launch_error) when someone else does. */
static int check_port_owner(const engine_server *sv, muh_measurement *m)
{
	unsigned long inodes[16];
	size_t ni = listeners(sv->port, inodes, 16);
	if (!ni)
		return 1;
	pid_t tree[4096];
	size_t nt = descendants(getpid(), tree, 4096);
	for (size_t i = 0; i < ni; i++) {
		int ours = 0;
		for (size_t k = 0; k < nt && !ours; k++)
			ours = holds_socket(tree[k], inodes[i]);
		if (ours)
			continue;
		char comm[64];
		pid_t who = socket_owner(inodes[i], comm, sizeof(comm));
		if (who)
			measurement_fail(m, EVAL_LAUNCH_ERROR,
					 "port %d is held by process %d (%s), which muh did not start: the server's "
					 "readiness answer came from someone else, and nothing was measured",
					 sv->port, (int)who, comm);
		else
			measurement_fail(m, EVAL_LAUNCH_ERROR,
					 "port %d is held by a process outside the server's tree (its owner cannot be "
					 "seen from here): the readiness answer came from someone else, and nothing was "
					 "measured",
					 sv->port);
		return -1;
	}
	return 0;
}

/* The first line of the log that names an error: a Python exception line
 * ("ModuleNotFoundError: No module named 'x'"), else the first line that
 * starts with error or fatal, holds "error:", or shouts ERROR or FATAL; ""
 * when none. The cause goes first in a failure's
 * text, so that a table cut at its width still shows it. */
static void log_cause(const char *path, char *buf, size_t n)
{
	buf[0] = '\0';
	FILE *f = fopen(path, "rb");
	if (!f)
		return;
	char line[1024], any[1024] = "";
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		const char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		size_t w = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.");
		if (w > 5 && (p[w] == ':' || p[w] == '\0') &&
		    ((w >= 5 && !memcmp(p + w - 5, "Error", 5)) || (w >= 9 && !memcmp(p + w - 9, "Exception", 9)))) {
			snprintf(buf, n, "%.300s", p);
			fclose(f);
			return;
		}
		/* else a line that says it is an error, not one that mentions the
		 * word (an argument dump: "...error_log=None...") */
		if (!any[0] && (!strncasecmp(p, "error", 5) || !strncasecmp(p, "fatal", 5) || strstr(p, "error:") ||
				strstr(p, "ERROR") || strstr(p, "FATAL")))
			snprintf(any, sizeof(any), "%.300s", p);
	}
	fclose(f);
	snprintf(buf, n, "%s", any);
}

/* "exited with status 1", "killed by signal 9 (SIGKILL)". */
static void describe_exit(int st, char *buf, size_t n)
{
	if (WIFSIGNALED(st)) {
		int sig = WTERMSIG(st);
		snprintf(buf, n, "killed by signal %d (SIG%s)", sig,
			 sig == SIGKILL ? "KILL" : sig == SIGSEGV ? "SEGV" : sig == SIGABRT ? "ABRT"
			 : sig == SIGTERM ? "TERM" : sig == SIGBUS ? "BUS" : "?");
	} else {
		snprintf(buf, n, "exited with status %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
}

/* Stops the server: SIGTERM to its group and to every process below the
 * runner (a child that left the group with setsid too), SIGKILL to all of
 * them after grace; reaps every one. Returns how many were still there
 * after the SIGKILL (0 when all are gone). */
static int stop_server(engine_server *sv, double grace_s, pid_t pgid)
{
	pid_t left[16];
	if (pgid > 0)
		kill(-pgid, SIGTERM);
	signal_tree(SIGTERM);
	double t0 = eval_now_s();
	while (eval_now_s() - t0 < grace_s) {
		while (waitpid(-1, NULL, WNOHANG) > 0) { /* the runner's children are all the server's */
		}
		leader_exited(sv);
		if ((pgid <= 0 || (kill(-pgid, 0) < 0 && errno == ESRCH)) && !descendants(getpid(), left, 16))
			return 0;
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	for (int k = 0; k < 200; k++) { /* up to 2 s for the kernel to take them */
		if (pgid > 0)
			kill(-pgid, SIGKILL);
		signal_tree(SIGKILL);
		while (waitpid(-1, NULL, WNOHANG) > 0) {
		}
		leader_exited(sv);
		if ((pgid <= 0 || (kill(-pgid, 0) < 0 && errno == ESRCH)) && !descendants(getpid(), left, 16))
			return 0;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return (int)descendants(getpid(), left, 16) + (pgid > 0 && kill(-pgid, 0) == 0);
}

static void rm_tree_shallow(const char *dir, const char *file_a, const char *file_b)
{
	char p[EVAL_PATH + 64];
	if (file_a) {
		snprintf(p, sizeof(p), "%s/%s", dir, file_a);
		unlink(p);
	}
	if (file_b) {
		snprintf(p, sizeof(p), "%s/%s", dir, file_b);
		unlink(p);
	}
	rmdir(dir);
}

static int engine_open(eval_ctx *c, muh_diag *d)
{
	if (curl_dl_open(d))
		return MUH_EENV;
	if (curl_dl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return diag_errorf(d, "libcurl cannot start"), MUH_EENV;
	/* a fixed target.port that something already listens on fails every
	 * variant alike: the environment's fault, said once before any work */
	if (c->target->port && port_taken(c->target->port))
		return diag_errorf(d, "port %d on 127.0.0.1 (target.port) is already taken by another "
				      "process; no server was started", c->target->port), MUH_EENV;
	/* a server's children that outlive it are reparented here and reaped */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	return MUH_OK;
}

static void engine_close(eval_ctx *c)
{
	if (curl_dl.global_cleanup) /* NULL: engine_open found no libcurl */
		curl_dl.global_cleanup();
}

/* 1 when argument name of f is a boolean flag (in the file, or in its
 * schema): a param's 0/1 is then written False/True. */
static int is_bool_arg(const deploy_file *f, const char *name)
{
	const deploy_arg *a = deploy_find(f, name);
	if (a)
		return a->kind == DEPLOY_FLAG || a->kind == DEPLOY_NEG || !strcmp(a->type, "bool");
	const deploy_schema *sc = f->schema;
	while (*name == '-')
		name++;
	for (size_t i = 0; sc && i < sc->n; i++) {
		const deploy_option *o = &sc->opts[i];
		size_t k = 0;
		for (; name[k] && o->name[k]; k++)
			if (!(name[k] == o->name[k] || (name[k] == '-' && o->name[k] == '_')))
				break;
		if (!name[k] && !o->name[k])
			return !strcmp(o->type, "bool") || o->takes_value == 0;
	}
	return 0;
}

const char *engine_arg_name(const muh_target *t, const char *param)
{
	for (int k = 0; k < t->nknobs; k++) /* knobs: PARAM: ARGUMENT renames */
		if (!strcmp(t->knob_param[k], param))
			return t->knob_id[k];
	return param;
}

void engine_value_text(const deploy_file *f, const char *arg, muh_value v, char *buf, size_t n)
{
	if (v.t == MUH_INT && (v.u.i == 0 || v.u.i == 1) && is_bool_arg(f, arg))
		snprintf(buf, n, "%s", v.u.i ? "True" : "False");
	else
		value_fmt(buf, n, v);
}

int engine_launch_text(const muh_target *t, const muh_variant *v, int port, deploy_file **out, char *why,
		       size_t n)
{
	deploy_file *f = NULL;
	muh_diag d;
	diag_clear(&d);
	*out = NULL;
	int rc = t->launch[0] ? deploy_load(t->launch, NULL, &f, &d)
			      : deploy_parse("target.command", t->command, strlen(t->command), NULL, &f, &d);
	if (rc) {
		snprintf(why, n, "cannot read the launch file: %s", d.msg);
		return MUH_EINPUT;
	}
	for (size_t i = 0; i <= v->nparams; i++) {
		char val[256];
		const char *name;
		if (i < v->nparams) {
			name = engine_arg_name(t, v->names[i]);
			engine_value_text(f, name, v->values[i], val, sizeof(val));
		} else {
			if (port <= 0)
				break;
			name = t->port_arg;
			snprintf(val, sizeof(val), "%d", port);
		}
		char *text;
		size_t len;
		diag_clear(&d);
		if (deploy_set(f, name, val, &text, &len, &d)) {
			snprintf(why, n, "%s=%s cannot be written into %s: %s", name, val, f->path, d.msg);
			deploy_free(f);
			return MUH_EINPUT;
		}
		deploy_file *g = NULL;
		rc = deploy_parse(f->path, text, len, NULL, &g, &d);
		free(text);
		if (rc) {
			snprintf(why, n, "%s with %s=%s does not parse: %s", f->path, name, val, d.msg);
			deploy_free(f);
			return MUH_EINPUT;
		}
		deploy_free(f);
		f = g;
	}
	*out = f;
	return MUH_OK;
}

/* The launch file of variant v, or NULL with m failed (invalid: the variant
 * cannot be written into this file). */
static deploy_file *variant_launch(const muh_target *t, const muh_variant *v, int port, muh_measurement *m)
{
	deploy_file *f;
	char why[EVAL_ERR - 64];
	if (engine_launch_text(t, v, port, &f, why, sizeof(why))) {
		measurement_fail(m, EVAL_INVALID, "%s", why);
		return NULL;
	}
	return f;
}

/* The fingerprint: hash of argv and env, with both in the detail. */
static void fingerprint(const deploy_file *f, muh_measurement *m, cJSON **detail)
{
	uint64_t h = EVAL_HASH_INIT;
	cJSON *o = cJSON_CreateObject();
	cJSON *av = cJSON_AddArrayToObject(o, "argv");
	for (size_t i = 0; i < f->argc; i++) {
		h = eval_hash(f->argv[i], strlen(f->argv[i]) + 1, h);
		cJSON_AddItemToArray(av, cJSON_CreateString(f->argv[i]));
	}
	cJSON *env = cJSON_AddObjectToObject(o, "env");
	for (size_t i = 0; i < f->nargs; i++) {
		const deploy_arg *a = &f->args[i];
		if (a->kind != DEPLOY_ENV)
			continue;
		h = eval_hash(a->name, strlen(a->name) + 1, h);
		h = eval_hash(a->value, strlen(a->value) + 1, h);
		cJSON_AddStringToObject(env, a->name, a->value);
	}
	snprintf(m->fingerprint, sizeof(m->fingerprint), "%016llx", (unsigned long long)h);
	*detail = o;
}

/* The launch file's folder (the server's working directory). */
static void launch_dir(const muh_target *t, char *out, size_t n)
{
	snprintf(out, n, "%s", t->launch[0] ? t->launch : t->spec_dir);
	if (t->launch[0]) {
		char *sl = strrchr(out, '/');
		if (sl)
			*sl = '\0';
		else
			snprintf(out, n, ".");
	}
}

/* A step of muh's own that failed with errno e (what: what it did, for a
 * person): muh's environment when e says muh ran short (eval_env_fail: the
 * run stops there), else the variant's launch_error. */
static void env_or_fail(eval_ctx *c, muh_measurement *m, int e, const char *what)
{
	if (eval_env_errno(e)) {
		char w[160];
		eval_env_what(e, w, sizeof(w));
		eval_env_fail(c, m, "%s: muh ran out of %s; muh's environment, not the server's fault", what, w);
	} else {
		measurement_fail(m, EVAL_LAUNCH_ERROR, "%s: %s", what, e ? strerror(e) : "failed");
	}
}

/* Starts the server of f in its own process group, output into sv->log. */
static int spawn(eval_ctx *c, const deploy_file *f, engine_server *sv, muh_measurement *m)
{
	const muh_target *t = c->target;
	if (f->argc == 0 || f->first_arg > f->argc) {
		measurement_fail(m, EVAL_LAUNCH_ERROR, "the launch file holds no command");
		return -1;
	}
	char cwd[EVAL_PATH];
	launch_dir(t, cwd, sizeof(cwd));
	char **argv = calloc(f->argc + 1, sizeof(char *));
	if (!argv) {
		env_or_fail(c, m, ENOMEM, "muh could not allocate the server's state");
		return -1;
	}
	for (size_t i = 0; i < f->argc; i++)
		argv[i] = f->argv[i];
	int err[2];
	if (pipe2(err, O_CLOEXEC)) {
		env_or_fail(c, m, errno, "cannot start the server: pipe");
		free(argv);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		env_or_fail(c, m, errno, "cannot start the server: fork");
		free(argv);
		close(err[0]);
		close(err[1]);
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int fd = open(sv->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int nul = open("/dev/null", O_RDONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (nul >= 0)
			dup2(nul, 0);
		for (size_t i = 0; i < f->nargs; i++)
			if (f->args[i].kind == DEPLOY_ENV)
				setenv(f->args[i].name, f->args[i].value, 1);
		signal(SIGPIPE, SIG_DFL);
		const char *why = "chdir";
		if (chdir(cwd) == 0) {
			why = "exec";
			execvp(argv[0], argv);
		}
		int e = errno;
		char msg[512];
		int k = snprintf(msg, sizeof(msg), "%s %s: %s", why, why[0] == 'c' ? cwd : argv[0], strerror(e));
		if (write(err[1], msg, (size_t)k) < 0) {
		}
		_exit(127);
	}
	setpgid(pid, pid); /* both sides, so kill(-pid) works at once */
	close(err[1]);
	char msg[512];
	ssize_t k = read(err[0], msg, sizeof(msg) - 1);
	close(err[0]);
	free(argv);
	sv->pid = sv->pgid = pid;
	if (k > 0) { /* exec failed: the pipe got a message before closing */
		msg[k] = '\0';
		waitpid(pid, &sv->status, 0);
		sv->pid = 0;
		measurement_fail(m, EVAL_LAUNCH_ERROR, "cannot start the server: %s", msg);
		return -1;
	}
	return 0;
}

/* 1 when the log contains text. */
static int log_has(const char *path, const char *text)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	char *buf = malloc(1 << 20);
	size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
	fclose(f);
	if (!buf)
		return 0;
	buf[n] = '\0';
	int hit = memmem(buf, n, text, strlen(text)) != NULL;
	free(buf);
	return hit;
}

/* Waits until the server is ready, exits, or the ready timeout passes. */
static int wait_ready(const muh_target *t, engine_server *sv, muh_measurement *m)
{
	double t0 = eval_now_s();
	char probe[EVAL_STR + 160];
	snprintf(probe, sizeof(probe), "%s%s", sv->url, t->ready_http);
	for (;;) {
		if (leader_exited(sv)) {
			char how[96], tail[1024], cause[320];
			describe_exit(sv->status, how, sizeof(how));
			log_tail(sv->log, 6, tail, sizeof(tail));
			log_cause(sv->log, cause, sizeof(cause));
			measurement_fail(m, EVAL_LAUNCH_ERROR,
					 "the server %s before it was ready%s%s (after %.1f s); its log: %s", how,
					 cause[0] ? ": " : "", cause, eval_now_s() - t0, tail);
			return -1;
		}
		if (t->ready_log[0] ? log_has(sv->log, t->ready_log) : load_http_get(probe, 1.0, NULL) == 200) {
			int own = check_port_owner(sv, m);
			if (own <= 0)
				return own;
			if (!t->ready_log[0]) { /* an answer, and nobody here listens: not the server's */
				measurement_fail(m, EVAL_LAUNCH_ERROR,
						 "port %d answered, but no process listens on it in this network namespace "
						 "(/proc/net/tcp): the answer is not the server's, and nothing was measured",
						 sv->port);
				return -1;
			}
			/* the log said ready before the server listens: wait for it */
		}
		if (eval_now_s() - t0 > t->ready_timeout_s) {
			char tail[1024], cause[320];
			log_tail(sv->log, 6, tail, sizeof(tail));
			log_cause(sv->log, cause, sizeof(cause));
			measurement_fail(m, EVAL_LAUNCH_ERROR, "the server was not ready after %g s (%s %s)%s%s; its log: %s",
					 t->ready_timeout_s, t->ready_log[0] ? "log pattern" : "GET",
					 t->ready_log[0] ? t->ready_log : t->ready_http, cause[0] ? ": " : "", cause, tail);
			return -1;
		}
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

static int engine_build(eval_ctx *c, const muh_variant *v, muh_measurement *m)
{
	const muh_target *t = c->target;
	engine_server *sv = calloc(1, sizeof(*sv));
	if (!sv) {
		env_or_fail(c, m, ENOMEM, "muh could not allocate the server's state");
		return MUH_OK;
	}
	char why[256];
	int bad = eval_target_load(t, &sv->load, why, sizeof(why));
	if (bad >= 0) {
		measurement_fail(m, EVAL_INVALID, "load.%s: %s", t->load_key[bad], why);
		free(sv);
		return MUH_OK;
	}
	sv->port = t->port ? t->port : free_port();
	if (!sv->port) {
		measurement_fail(m, EVAL_LAUNCH_ERROR, "no free port on 127.0.0.1");
		free(sv);
		return MUH_OK;
	}
	if (port_taken(sv->port)) {
		measurement_fail(m, EVAL_LAUNCH_ERROR,
				 "port %d on 127.0.0.1 is already taken by another process; the server was not "
				 "started (a probe there would measure someone else's server)",
				 sv->port);
		free(sv);
		return MUH_OK;
	}
	snprintf(sv->url, sizeof(sv->url), "http://127.0.0.1:%d", sv->port);
	snprintf(sv->load.url, sizeof(sv->load.url), "%s", sv->url);
	deploy_file *f = variant_launch(t, v, sv->port, m);
	if (!f) {
		free(sv);
		return MUH_OK;
	}
	cJSON *detail;
	fingerprint(f, m, &detail);
	char tmpl[EVAL_PATH + 16];
	snprintf(tmpl, sizeof(tmpl), "%s/engine", t->cache_dir);
	eval_mkdirs(tmpl);
	snprintf(sv->dir, sizeof(sv->dir), "%s/engine/run-XXXXXX", t->cache_dir);
	if (!mkdtemp(sv->dir)) {
		char what[EVAL_PATH + 64];
		int e = errno;
		snprintf(what, sizeof(what), "cannot create %s", sv->dir);
		env_or_fail(c, m, e, what);
		sv->dir[0] = '\0';
		goto fail;
	}
	char copy[EVAL_PATH + 48];
	snprintf(copy, sizeof(copy), "%s/launch", sv->dir);
	errno = 0;
	FILE *cf = fopen(copy, "wb");
	int wrote = cf && fwrite(f->text, 1, f->len, cf) == f->len;
	int werr = errno;
	if (cf && fclose(cf) && wrote) {
		wrote = 0;
		werr = errno;
	}
	if (!wrote) {
		char what[EVAL_PATH + 128];
		snprintf(what, sizeof(what), "cannot write %s", copy);
		env_or_fail(c, m, werr, what);
		goto fail;
	}
	cJSON_AddStringToObject(detail, "launch", copy);
	snprintf(sv->log, sizeof(sv->log), "%s/server.log", sv->dir);
	if (spawn(c, f, sv, m) || wait_ready(t, sv, m))
		goto fail;
	if (t->props[0]) {
		char url[EVAL_STR + 160], *body = NULL;
		snprintf(url, sizeof(url), "%s%s", sv->url, t->props);
		long code = load_http_get(url, 5.0, &body);
		cJSON *p = body && code == 200 ? cJSON_Parse(body) : NULL;
		free(body);
		if (p)
			cJSON_AddItemToObject(detail, "server", p);
		else
			cJSON_AddStringToObject(detail, "server", "no answer");
	}
	deploy_free(f);
	m->fp_detail = cJSON_PrintUnformatted(detail);
	cJSON_Delete(detail);
	c->built = sv;
	return MUH_OK;
fail:
	m->fp_detail = cJSON_PrintUnformatted(detail);
	cJSON_Delete(detail);
	deploy_free(f);
	if (sv->pgid)
		stop_server(sv, t->stop_grace_s, sv->pgid);
	if (sv->dir[0])
		rm_tree_shallow(sv->dir, "launch", "server.log");
	free(sv);
	return MUH_OK;
}

/* m->metrics: the median of each metric over the runs so far, and
 * usage_checked: false when a run's usage blocks were too few chunks to
 * judge (load_result.usage_checked), true when every run's were judged;
 * absent when no run's server sent a usage block (nothing to judge). */
static void set_metrics(engine_server *sv, muh_measurement *m)
{
	cJSON *o = cJSON_CreateObject();
	double col[ENG_MAX_REPEATS];
	for (size_t j = 0; j < sv->nmetrics; j++) {
		size_t n = 0;
		for (size_t r = 0; r < sv->nrep; r++)
			if (isfinite(sv->vals[r][j]))
				col[n++] = sv->vals[r][j];
		if (!n)
			continue;
		stats_sort(col, n);
		double med = n % 2 ? col[n / 2] : 0.5 * (col[n / 2 - 1] + col[n / 2]);
		cJSON_AddNumberToObject(o, sv->names[j], med);
	}
	cJSON_AddNumberToObject(o, "repeats", (double)sv->nrep);
	if (sv->usage_runs)
		cJSON_AddBoolToObject(o, "usage_checked", !sv->usage_short);
	free(m->metrics);
	m->metrics = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
}

static int engine_time(eval_ctx *c, const muh_variant *v, int warm, double *out, size_t max, size_t *n,
		       muh_measurement *m)
{
	engine_server *sv = c->built;
	*n = 0;
	if (!sv || max == 0)
		return MUH_OK;
	load_result r;
	muh_diag d;
	diag_clear(&d);
	load_rate_result *fr = NULL;
	double miss_rate = 0;
	int rc;
	if (sv->load.find_rate && !warm) {
		/* the sample is the highest Poisson rate within the load's SLOs
		 * (slo_ttft, slo_tpot as p99s, no error): seconds per request there */
		load_rate_opts ro;
		load_rate_defaults(&ro);
		ro.slo_ttft_p99_s = sv->load.slo_ttft_s;
		ro.slo_tpot_p99_s = sv->load.slo_tpot_s;
		ro.steps = sv->load.find_rate_steps;
		fr = malloc(sizeof(*fr));
		rc = fr ? load_find_rate(&sv->load, &ro, fr, &d) : MUH_ENOMEM;
		if (!rc && (fr->rate > 0 || fr->miss_rate > 0)) {
			/* no rate met: the run that missed by least, a measured miss
			 * (rate_slo_miss says by how much), unless it failed requests */
			r = fr->at;
			miss_rate = fr->miss_rate;
		} else if (!rc) {
			load_rate_step *last = &fr->steps[fr->nsteps - 1];
			measurement_fail(m, EVAL_WRONG_RESULT,
					 "no arrival rate met the SLOs (%zu load runs, the last at %.3g req/s: %s)", fr->nsteps,
					 last->rate, last->why);
			free(fr);
			return MUH_OK;
		}
	} else {
		rc = load_run(&sv->load, &r, &d);
	}
	free(fr);
	if (rc == MUH_ENOMEM)
		eval_env_fail(c, m, "load: muh ran out of memory (ENOMEM): %s", d.msg);
	else if (rc == MUH_EENV) /* muh's own descriptors, memory, libcurl: not the server's doing */
		eval_env_fail(c, m, "load: %s", d.msg);
	else if (rc)
		measurement_fail(m, EVAL_INVALID, "load: %s", d.msg);
	if (rc)
		return MUH_OK;
	if (warm)
		return MUH_OK;
	if (sv->nrep < ENG_MAX_REPEATS) {
		double vals[ENG_MAX_METRICS];
		sv->nmetrics = load_metrics(&r, sv->names, vals, ENG_MAX_METRICS);
		memcpy(sv->vals[sv->nrep], vals, sv->nmetrics * sizeof(double));
		sv->nrep++;
		sv->usage_runs += r.usage_requests > 0;
		sv->usage_short += r.usage_requests > 0 && !r.usage_checked;
	}
	set_metrics(sv, m);
	/* failed requests may be the server dying: its sockets close before it
	 * is a zombie, so give its exit a moment to show */
	for (int k = 0; k < 50 && (r.errors || r.unreachable) && !leader_exited(sv); k++) {
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	if (leader_exited(sv)) {
		char how[96], tail[1024], cause[320];
		describe_exit(sv->status, how, sizeof(how));
		log_tail(sv->log, 4, tail, sizeof(tail));
		log_cause(sv->log, cause, sizeof(cause));
		measurement_fail(m, EVAL_CRASH, "the server %s during the load%s%s (%zu of %zu requests failed: %s); its log: %s",
				 how, cause[0] ? ": " : "", cause, r.errors, r.sent, r.first_error, tail);
		return MUH_OK;
	}
	if (r.errors || r.truncated) {
		/* a request past load.request_timeout is the server not answering
		 * in time, not a wrong answer: timeout when every failed request
		 * timed out, or when none was answered and some timed out */
		int hung = r.ok == 0 && !r.truncated && r.timed_out > 0;
		int only_timeouts = r.timed_out == r.errors && !r.truncated;
		if (hung)
			measurement_fail(m, EVAL_TIMEOUT, "the server stopped answering: %zu of %zu requests timed out%s (%s)",
					 r.timed_out, r.sent, only_timeouts ? "" : ", the rest failed otherwise",
					 r.first_error);
		else if (only_timeouts)
			measurement_fail(m, EVAL_TIMEOUT,
					 "%zu of %zu requests timed out (load.request_timeout %g s), %zu answered: %s",
					 r.timed_out, r.sent, sv->load.request_timeout_s, r.ok, r.first_error);
		else if (r.truncated && !r.errors)
			measurement_fail(m, EVAL_WRONG_RESULT,
					 "%zu of %zu completions truncated: shorter than the %d output tokens asked for "
					 "(the server's context per slot is too small?)",
					 r.truncated, r.sent, sv->load.output_tokens);
		else
			measurement_fail(m, EVAL_WRONG_RESULT, "%zu of %zu requests failed, %zu truncated: %s", r.errors,
					 r.sent, r.truncated, r.first_error);
		return MUH_OK;
	}
	if (!(r.output_tokens_per_s > 0)) {
		measurement_fail(m, EVAL_WRONG_RESULT, "the load produced no output tokens");
		return MUH_OK;
	}
	/* find_rate: seconds per request at the highest rate met, or, when none
	 * was, at the rate of the run that missed by least */
	out[0] = sv->load.find_rate ? 1.0 / (r.max_rate > 0 ? r.max_rate : miss_rate) : 1.0 / r.output_tokens_per_s;
	*n = 1;
	return MUH_OK;
}

static void engine_release(eval_ctx *c)
{
	engine_server *sv = c->built;
	if (!sv)
		return;
	pid_t pgid = sv->pgid;
	int left = stop_server(sv, c->target->stop_grace_s, pgid);
	if (left)
		fprintf(stderr, "muh: engine: %d process(es) of the server (group %d and its descendants) survived "
				"SIGKILL\n", left, (int)pgid);
	rm_tree_shallow(sv->dir, "launch", "server.log");
	free(sv);
	c->built = NULL;
}

const eval_backend backend_engine = {
    .name = "engine",
    .traits = EVAL_HOST_TIMED | EVAL_SERVER,
    .open = engine_open,
    .build = engine_build,
    .time = engine_time,
    .release = engine_release,
    .close = engine_close,
};
