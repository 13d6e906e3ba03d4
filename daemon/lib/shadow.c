// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Upstream's shadow tree (famfs logplay --shadow): DIR/root holds one
 * directory per logged directory and, per logged file, a YAML file of
 * upstream's schema (a "file" mapping: path, size, flags, mode, uid, gid,
 * nextents, and simple_ext_list or striped_ext_list) that upstream's FUSE
 * daemon serves from. Written and read with libyaml.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "internal.h"
#include "namespace.h"

/* ---- writing ------------------------------------------------------------ */

struct emit {
	yaml_emitter_t em;
	bool failed;
};

static void ev(struct emit *e, yaml_event_t *event, int ok)
{
	if (!ok || !yaml_emitter_emit(&e->em, event))
		e->failed = true;
}

static void scalar(struct emit *e, const char *s)
{
	yaml_event_t event;

	ev(e, &event,
	   yaml_scalar_event_initialize(&event, NULL, NULL, (yaml_char_t *)s,
					-1, 1, 1, YAML_PLAIN_SCALAR_STYLE));
}

static void keyval(struct emit *e, const char *key, const char *fmt, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), fmt, v);
	scalar(e, key);
	scalar(e, buf);
}

static void map_start(struct emit *e)
{
	yaml_event_t event;

	ev(e, &event,
	   yaml_mapping_start_event_initialize(&event, NULL, NULL, 1,
					       YAML_BLOCK_MAPPING_STYLE));
}

static void map_end(struct emit *e)
{
	yaml_event_t event;

	ev(e, &event, yaml_mapping_end_event_initialize(&event));
}

static void seq_start(struct emit *e, const char *key)
{
	yaml_event_t event;

	scalar(e, key);
	ev(e, &event,
	   yaml_sequence_start_event_initialize(&event, NULL, NULL, 1,
						YAML_BLOCK_SEQUENCE_STYLE));
}

static void seq_end(struct emit *e)
{
	yaml_event_t event;

	ev(e, &event, yaml_sequence_end_event_initialize(&event));
}

static void extents(struct emit *e, const struct famfs_omf_extent *x,
		    uint64_t n)
{
	seq_start(e, "simple_ext_list");
	for (uint64_t i = 0; i < n; i++) {
		map_start(e);
		keyval(e, "devindex", "%" PRIu64, x[i].devindex);
		keyval(e, "offset", "0x%" PRIx64, x[i].offset);
		keyval(e, "length", "0x%" PRIx64, x[i].len);
		map_end(e);
	}
	seq_end(e);
}

static int write_cb(void *arg, unsigned char *buf, size_t len)
{
	return fwrite(buf, 1, len, arg) == len;
}

int famfs_shadow_emit(const struct famfs_omf_file *fe, FILE *f)
{
	const struct famfs_omf_fmap *fm = &fe->fmap;
	bool il = fm->ext_type == FAMFS_EXT_INTERLEAVE;
	uint32_t n = il ? fm->interleave.niext : fm->simple.nextents;
	struct emit e = {.failed = false};
	yaml_event_t event;

	if (n > (il ? FAMFS_MAX_IEXT : FAMFS_MAX_SIMPLE_EXT))
		return famfs_fail(EINVAL, "%s: %u extents", fe->relpath, n);
	if (!yaml_emitter_initialize(&e.em))
		return famfs_fail(ENOMEM, "cannot start a YAML emitter");
	yaml_emitter_set_output(&e.em, write_cb, f);
	ev(&e, &event,
	   yaml_stream_start_event_initialize(&event, YAML_UTF8_ENCODING));
	ev(&e, &event,
	   yaml_document_start_event_initialize(&event, NULL, NULL, NULL, 0));
	map_start(&e);
	scalar(&e, "file");
	map_start(&e);
	scalar(&e, "path");
	scalar(&e, fe->relpath);
	keyval(&e, "size", "%" PRIu64, fe->size);
	keyval(&e, "flags", "%" PRIu64, fe->flags);
	keyval(&e, "mode", "0%" PRIo64, fe->mode);
	keyval(&e, "uid", "%" PRIu64, fe->uid);
	keyval(&e, "gid", "%" PRIu64, fe->gid);
	keyval(&e, "nextents", "%" PRIu64, n);
	if (il) {
		seq_start(&e, "striped_ext_list");
		for (uint32_t i = 0; i < n; i++) {
			const struct famfs_omf_iext *ie = &fm->interleave.ie[i];

			map_start(&e);
			keyval(&e, "nstrips", "%" PRIu64, ie->nstrips);
			keyval(&e, "chunk_size", "0x%" PRIx64, ie->chunk_size);
			extents(&e, ie->strips,
				ie->nstrips < FAMFS_MAX_STRIPS
					? ie->nstrips
					: FAMFS_MAX_STRIPS);
			map_end(&e);
		}
		seq_end(&e);
	} else {
		extents(&e, fm->simple.se, n);
	}
	map_end(&e);
	map_end(&e);
	ev(&e, &event, yaml_document_end_event_initialize(&event, 0));
	ev(&e, &event, yaml_stream_end_event_initialize(&event));
	yaml_emitter_delete(&e.em);
	if (e.failed || fflush(f))
		return famfs_fail(EIO, "cannot write the YAML of %s",
				  fe->relpath);
	return 0;
}

/* ---- reading ------------------------------------------------------------ */

static const char *str(yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE
		       ? (const char *)n->data.scalar.value
		       : NULL;
}

/* The value of @key in mapping @map, or NULL. */
static yaml_node_t *get(yaml_document_t *d, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		const char *k = str(yaml_document_get_node(d, p->key));

		if (k && !strcmp(k, key))
			return yaml_document_get_node(d, p->value);
	}
	return NULL;
}

static int num(yaml_document_t *d, yaml_node_t *map, const char *key,
	       uint64_t max, uint64_t *out)
{
	const char *s = str(get(d, map, key));
	char *end;

	if (!s || !*s)
		return famfs_fail(EINVAL, "no %s", key);
	errno = 0;
	*out = strtoull(s, &end, 0); /* 0x.. hex, 0.. octal (mode) */
	if (errno || *end || *out > max)
		return famfs_fail(EINVAL, "%s: bad value \"%s\"", key, s);
	return 0;
}

/* Items of sequence @key of @map: *@n of them, at most @max. */
static yaml_node_item_t *items(yaml_document_t *d, yaml_node_t *map,
			       const char *key, uint64_t max, uint64_t *n)
{
	yaml_node_t *s = get(d, map, key);

	if (!s || s->type != YAML_SEQUENCE_NODE) {
		famfs_fail(EINVAL, "no %s", key);
		return NULL;
	}
	*n = (uint64_t)(s->data.sequence.items.top -
			s->data.sequence.items.start);
	if (*n > max) {
		famfs_fail(EINVAL, "%s: %" PRIu64 " entries", key, *n);
		return NULL;
	}
	return s->data.sequence.items.start;
}

static int read_extents(yaml_document_t *d, yaml_node_t *map, uint64_t max,
			struct famfs_omf_extent *x, uint64_t *n)
{
	yaml_node_item_t *it = items(d, map, "simple_ext_list", max, n);

	if (!it)
		return -EINVAL;
	for (uint64_t i = 0; i < *n; i++) {
		yaml_node_t *m = yaml_document_get_node(d, it[i]);

		if (num(d, m, "devindex", UINT64_MAX, &x[i].devindex) ||
		    num(d, m, "offset", UINT64_MAX, &x[i].offset) ||
		    num(d, m, "length", UINT64_MAX, &x[i].len))
			return -EINVAL;
	}
	return 0;
}

static int read_file(yaml_document_t *d, struct famfs_omf_file *fe)
{
	yaml_node_t *f = get(d, yaml_document_get_root_node(d), "file");
	struct famfs_omf_fmap *fm = &fe->fmap;
	const char *path = str(get(d, f, "path"));
	uint64_t v[5], n, nx;

	if (!f)
		return famfs_fail(EINVAL, "no \"file\" mapping");
	if (!path || strlen(path) >= sizeof(fe->relpath))
		return famfs_fail(EINVAL, "no path, or one too long");
	strcpy(fe->relpath, path);
	if (num(d, f, "size", UINT64_MAX, &fe->size) ||
	    num(d, f, "flags", UINT32_MAX, &v[0]) ||
	    num(d, f, "mode", UINT32_MAX, &v[1]) ||
	    num(d, f, "uid", UINT32_MAX, &v[2]) ||
	    num(d, f, "gid", UINT32_MAX, &v[3]) ||
	    num(d, f, "nextents", UINT32_MAX, &v[4]))
		return -EINVAL;
	fe->flags = (uint32_t)v[0];
	fe->mode = (uint32_t)v[1];
	fe->uid = (uint32_t)v[2];
	fe->gid = (uint32_t)v[3];
	if (!get(d, f, "striped_ext_list")) {
		fm->ext_type = FAMFS_EXT_SIMPLE;
		if (read_extents(d, f, FAMFS_MAX_SIMPLE_EXT, fm->simple.se, &n))
			return -EINVAL;
		fm->simple.nextents = (uint32_t)n;
	} else {
		yaml_node_item_t *it =
			items(d, f, "striped_ext_list", FAMFS_MAX_IEXT, &n);

		if (!it)
			return -EINVAL;
		fm->ext_type = FAMFS_EXT_INTERLEAVE;
		fm->interleave.niext = (uint32_t)n;
		for (uint64_t i = 0; i < n; i++) {
			struct famfs_omf_iext *ie = &fm->interleave.ie[i];
			yaml_node_t *m = yaml_document_get_node(d, it[i]);

			if (num(d, m, "nstrips", FAMFS_MAX_STRIPS,
				&ie->nstrips) ||
			    num(d, m, "chunk_size", UINT64_MAX,
				&ie->chunk_size) ||
			    read_extents(d, m, FAMFS_MAX_STRIPS, ie->strips,
					 &nx))
				return -EINVAL;
			if (nx != ie->nstrips)
				return famfs_fail(EINVAL,
						  "nstrips %" PRIu64
						  " but %" PRIu64 " strips",
						  ie->nstrips, nx);
		}
	}
	if (v[4] != n)
		return famfs_fail(
			EINVAL, "nextents %" PRIu64 " but %" PRIu64 " extents",
			v[4], n);
	return 0;
}

/*
 * Limits on a YAML file read back: ours are under 4 KiB and 6 levels
 * deep. Without them a file of nested brackets costs minutes of CPU in
 * libyaml (200 KB: 26 s).
 */
#define SHADOW_YAML_MAX	  (64 * 1024)
#define SHADOW_YAML_DEPTH 16

static int not_yaml(yaml_parser_t *p)
{
	return famfs_fail(EINVAL, "not YAML: %s at line %zu",
			  p->problem ? p->problem : "parse error",
			  p->problem_mark.line + 1);
}

/* Walk the events of @buf once, refusing nesting deeper than the limit. */
static int check_depth(const unsigned char *buf, size_t len)
{
	yaml_parser_t p;
	yaml_event_t ev;
	unsigned int depth = 0;
	int rc = 0;
	bool done = false;

	if (!yaml_parser_initialize(&p))
		return famfs_fail(ENOMEM, "cannot start a YAML parser");
	yaml_parser_set_input_string(&p, buf, len);
	while (!done && !rc) {
		if (!yaml_parser_parse(&p, &ev)) {
			rc = not_yaml(&p);
			break;
		}
		if (ev.type == YAML_SEQUENCE_START_EVENT ||
		    ev.type == YAML_MAPPING_START_EVENT) {
			if (++depth > SHADOW_YAML_DEPTH)
				rc = famfs_fail(
					EINVAL,
					"YAML nested deeper than %d levels at line %zu",
					SHADOW_YAML_DEPTH,
					ev.start_mark.line + 1);
		} else if (ev.type == YAML_SEQUENCE_END_EVENT ||
			   ev.type == YAML_MAPPING_END_EVENT) {
			depth--;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rc;
}

int famfs_shadow_parse(FILE *f, struct famfs_omf_file *fe)
{
	unsigned char *buf = malloc(SHADOW_YAML_MAX + 1);
	yaml_parser_t p;
	yaml_document_t d;
	size_t len;
	int rc;

	memset(fe, 0, sizeof(*fe));
	if (!buf)
		return famfs_fail(ENOMEM, "out of memory");
	len = fread(buf, 1, SHADOW_YAML_MAX + 1, f);
	if (ferror(f))
		rc = famfs_fail(EIO, "cannot read the YAML: %s",
				strerror(errno));
	else if (len > SHADOW_YAML_MAX)
		rc = famfs_fail(EFBIG, "YAML larger than %d bytes",
				SHADOW_YAML_MAX);
	else
		rc = check_depth(buf, len);
	if (rc) {
		free(buf);
		return rc;
	}
	if (!yaml_parser_initialize(&p)) {
		free(buf);
		return famfs_fail(ENOMEM, "cannot start a YAML parser");
	}
	yaml_parser_set_input_string(&p, buf, len);
	if (!yaml_parser_load(&p, &d)) {
		rc = not_yaml(&p);
	} else {
		rc = read_file(&d, fe);
		yaml_document_delete(&d);
	}
	yaml_parser_delete(&p);
	free(buf);
	return rc;
}

/* ---- playing the log into a shadow tree --------------------------------- */

static bool same_extents(const struct famfs_omf_extent *a,
			 const struct famfs_omf_extent *b, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (a[i].devindex != b[i].devindex ||
		    a[i].offset != b[i].offset || a[i].len != b[i].len)
			return false;
	return true;
}

static bool same_file(const struct famfs_omf_file *a,
		      const struct famfs_omf_file *b)
{
	const struct famfs_omf_fmap *x = &a->fmap, *y = &b->fmap;

	if (strcmp(a->relpath, b->relpath) || a->size != b->size ||
	    a->flags != b->flags || a->mode != b->mode || a->uid != b->uid ||
	    a->gid != b->gid || x->ext_type != y->ext_type)
		return false;
	if (x->ext_type != FAMFS_EXT_INTERLEAVE)
		return x->simple.nextents == y->simple.nextents &&
		       same_extents(x->simple.se, y->simple.se,
				    x->simple.nextents);
	if (x->interleave.niext != y->interleave.niext)
		return false;
	for (uint32_t i = 0; i < x->interleave.niext; i++) {
		const struct famfs_omf_iext *p = &x->interleave.ie[i];
		const struct famfs_omf_iext *q = &y->interleave.ie[i];

		if (p->nstrips != q->nstrips ||
		    p->chunk_size != q->chunk_size ||
		    !same_extents(p->strips, q->strips, p->nstrips))
			return false;
	}
	return true;
}

/*
 * The tree is built relative to open directories, never by path: no
 * symbolic link is followed (a directory the log gives to a user may
 * hold anything that user puts there), and each directory made is owned
 * and given its mode through its own descriptor.
 */
struct shadow {
	int rootfd;
	const char *root; /* for messages */
	bool dryrun, test;
	struct famfs_shadow_stats *st;
	/* the whole log played: a directory's last mode and owner */
	const struct famfs_ns *ns;
};

static void shadow_problem(struct shadow *s, const char *rel, const char *why)
{
	char path[PATH_MAX + FAMFS_PATH_LEN];
	char esc[FAMFS_ESCAPED_LEN(sizeof(path))];

	snprintf(path, sizeof(path), "%s/%s", s->root, rel);
	fprintf(stderr, "famfs shadow: %s: %s\n",
		famfs_escape(path, esc, sizeof(esc)), why);
	s->st->errors++;
}

/*
 * The directory that holds the last component of @rel, opened without
 * following links; its name is left in *@name. -1 after a problem
 * (missing in a dry run: -2, quietly).
 */
static int open_parent(struct shadow *s, const char *rel, const char **name)
{
	char comp[FAMFS_PATH_LEN];
	const char *p = rel, *slash;
	int fd = dup(s->rootfd);

	while (fd >= 0 && (slash = strchr(p, '/'))) {
		int next;

		snprintf(comp, sizeof(comp), "%.*s", (int)(slash - p), p);
		next = openat(fd, comp,
			      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			int err = errno;

			close(fd);
			if (s->dryrun && err == ENOENT)
				return -2;
			shadow_problem(
				s, rel,
				err == ELOOP || err == ENOTDIR
					? "a parent is not a directory (a symbolic link is never followed)"
					: strerror(err));
			return -1;
		}
		close(fd);
		fd = next;
		p = slash + 1;
	}
	if (fd < 0)
		shadow_problem(s, rel, strerror(errno));
	*name = p;
	return fd;
}

/* Check the YAML @name in @dir against @fe. */
static void shadow_test(struct shadow *s, int dir, const char *name,
			const char *rel, const struct famfs_omf_file *fe)
{
	struct famfs_omf_file got;
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	FILE *f;

	if (fd < 0) {
		shadow_problem(s, rel, strerror(errno));
		return;
	}
	/* What we wrote, not a link to a file of someone else's. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || st.st_nlink != 1) {
		shadow_problem(
			s, rel,
			"not a file this tree's writer made (another owner, or hard links): not read");
		close(fd);
		return;
	}
	f = fdopen(fd, "r");
	if (!f) {
		shadow_problem(s, rel, strerror(errno));
		close(fd);
		return;
	}
	if (famfs_shadow_parse(f, &got))
		shadow_problem(s, rel, famfs_errmsg());
	else if (!same_file(&got, fe))
		shadow_problem(s, rel, "its YAML does not match the log entry");
	else
		s->st->tested++;
	fclose(f);
}

static void shadow_file(struct shadow *s, int dir, const char *name,
			const char *rel, const struct famfs_omf_file *fe)
{
	struct stat st;
	FILE *f;
	int fd;

	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISREG(st.st_mode)) {
			shadow_problem(s, rel,
				       "something other than a file is there");
			return;
		}
		s->st->existed++;
	} else if (!s->dryrun) {
		fd = openat(dir, name,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				    O_CLOEXEC,
			    0644);
		f = fd < 0 ? NULL : fdopen(fd, "w");
		if (!f) {
			shadow_problem(s, rel, strerror(errno));
			if (fd >= 0)
				close(fd);
			return;
		}
		if (famfs_shadow_emit(fe, f))
			shadow_problem(s, rel, famfs_errmsg());
		if (fclose(f))
			shadow_problem(s, rel, strerror(errno));
	}
	if (s->test && !s->dryrun)
		shadow_test(s, dir, name, rel, fe);
}

/*
 * A directory's later MKDIR entries change its mode and owner: each entry
 * of a path gives the directory what its last one says, so that a tree
 * played again catches up and never passes through an earlier mode.
 */
static void dir_owner_mode(const struct shadow *s, const char *rel,
			   const struct famfs_omf_mkdir *md, uint32_t *mode,
			   uint32_t *uid, uint32_t *gid)
{
	const struct famfs_node *n =
		s->ns ? famfs_ns_resolve(s->ns, rel) : NULL;

	*mode = (n && n->is_dir ? n->mode : md->mode) & 07777;
	*uid = n && n->is_dir ? n->uid : md->uid;
	*gid = n && n->is_dir ? n->gid : md->gid;
}

/* Give the directory open as @fd @mode and owner; 1 if it changed. */
static int set_owner_mode(int fd, const struct stat *st, uint32_t mode,
			  uint32_t uid, uint32_t gid)
{
	bool change = st->st_uid != uid || st->st_gid != gid;

	if (change && fchown(fd, uid, gid) < 0)
		return -errno;
	/* chown may drop set-id bits: the mode goes after it */
	if ((change || (st->st_mode & 07777) != mode) && fchmod(fd, mode) < 0)
		return -errno;
	return change || (st->st_mode & 07777) != mode;
}

static void shadow_dir(struct shadow *s, int dir, const char *name,
		       const char *rel, const struct famfs_omf_mkdir *md)
{
	uint32_t mode, uid, gid;
	struct stat st;
	int fd, rc;

	dir_owner_mode(s, rel, md, &mode, &uid, &gid);
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			shadow_problem(
				s, rel,
				"something other than a directory is there");
			return;
		}
		s->st->existed++;
		if (s->dryrun || ((st.st_mode & 07777) == mode &&
				  st.st_uid == uid && st.st_gid == gid))
			return;
		fd = openat(dir, name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		rc = fd < 0 || fstat(fd, &st) < 0 ?
			     -errno :
			     set_owner_mode(fd, &st, mode, uid, gid);
		if (rc < 0)
			shadow_problem(s, rel, strerror(-rc));
		else
			s->st->changed += rc;
		if (fd >= 0)
			close(fd);
		return;
	}
	if (s->dryrun)
		return;
	/* Ours and closed to others until it has its owner and mode. */
	if (mkdirat(dir, name, 0700) < 0) {
		shadow_problem(s, rel, strerror(errno));
		return;
	}
	fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
		shadow_problem(
			s, rel,
			fd < 0 ? strerror(errno)
			       : "replaced by another's directory as it was made");
	} else if (fchown(fd, uid, gid) < 0 || fchmod(fd, mode) < 0) {
		shadow_problem(s, rel, strerror(errno));
	}
	if (fd >= 0)
		close(fd);
}

/*
 * A MKDIR entry of a directory an earlier entry made (namespace.c): its
 * inode is that entry's index + 2. A path the log makes only later is not
 * one: this entry was skipped, as on any replay.
 */
static bool is_dir_change(const struct shadow *s, uint64_t index,
			  const char *rel)
{
	const struct famfs_node *n;

	if (!s->ns || index >= s->ns->nindex || s->ns->by_index[index])
		return false;
	n = famfs_ns_resolve(s->ns, rel);
	return n && n->is_dir && n->ino - 2 < index;
}

/* A dry run where no tree is yet: every entry would be new. */
static int count_entry(const struct famfs_omf_entry *e, uint64_t index,
		       void *arg)
{
	struct shadow *s = arg;

	if (e->type == FAMFS_ENTRY_FILE)
		s->st->files++;
	else if (e->type == FAMFS_ENTRY_MKDIR &&
		 is_dir_change(s, index, e->mkdir.relpath))
		s->st->dir_changes++;
	else if (e->type == FAMFS_ENTRY_MKDIR)
		s->st->dirs++;
	return 0;
}

static int shadow_entry(const struct famfs_omf_entry *e, uint64_t index,
			void *arg)
{
	struct shadow *s = arg;
	const char *rel, *name;
	int dir;

	if (e->type != FAMFS_ENTRY_FILE && e->type != FAMFS_ENTRY_MKDIR)
		return 0;
	rel = e->type == FAMFS_ENTRY_FILE ? e->file.relpath : e->mkdir.relpath;
	if (e->type == FAMFS_ENTRY_FILE) {
		s->st->files++;
	} else if (is_dir_change(s, index, rel)) {
		/* its first entry gave the directory the last mode already */
		s->st->dir_changes++;
		return 0;
	} else {
		s->st->dirs++;
	}
	dir = open_parent(s, rel, &name);
	if (dir < 0)
		return 0;
	if (e->type == FAMFS_ENTRY_FILE)
		shadow_file(s, dir, name, rel, &e->file);
	else
		shadow_dir(s, dir, name, rel, &e->mkdir);
	close(dir);
	return 0;
}

int famfs_shadow_play(struct famfs_dev *dev, const char *dir, bool dryrun,
		      bool test, struct famfs_shadow_stats *st)
{
	char root[PATH_MAX];
	struct shadow s = {-1, root, dryrun, test, st, NULL};
	struct famfs_walk w;
	struct famfs_ns ns;
	size_t n = strlen(dir);
	int dirfd, rc;

	memset(st, 0, sizeof(*st));
	if (snprintf(root, sizeof(root), "%s/root", dir) >= (int)sizeof(root))
		return famfs_fail(ENAMETOOLONG, "shadow path %s is too long",
				  dir);
	dirfd = famfs_private_dir_open(dir, "shadow directory");
	if (dirfd < 0)
		return dirfd;
	/* DIR/root, unless DIR already is one (as upstream) */
	if (n >= 5 && !strcmp(dir + n - 5, "/root")) {
		snprintf(root, sizeof(root), "%s", dir);
		s.rootfd = dirfd;
	} else {
		if (!dryrun && mkdirat(dirfd, "root", 0755) < 0 &&
		    errno != EEXIST) {
			rc = famfs_fail(errno, "%s: %s", root, strerror(errno));
			close(dirfd);
			return rc;
		}
		s.rootfd =
			openat(dirfd, "root",
			       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		rc = s.rootfd < 0
			     ? famfs_fail(
				       errno, "%s: %s", root,
				       errno == ELOOP || errno == ENOTDIR
					       ? "not a directory (a symbolic link is never followed)"
					       : strerror(errno))
			     : famfs_private_dir_check(s.rootfd, "shadow tree",
						       root, true);
		close(dirfd);
		/* a dry run of a tree never made reads nothing there */
		if (rc && !(dryrun && s.rootfd < 0 && rc == -ENOENT)) {
			if (s.rootfd >= 0)
				close(s.rootfd);
			return rc;
		}
	}
	/* a damaged log: what came before the bad entry still counts */
	famfs_ns_load(dev, &ns, &(struct famfs_walk){ 0 }, NULL);
	s.ns = &ns;
	rc = famfs_dev_log_walk(dev, s.rootfd < 0 ? count_entry : shadow_entry,
				&s, &w);
	famfs_ns_free(&ns);
	if (s.rootfd < 0)
		return 0;
	close(s.rootfd);
	if (rc)
		return rc;
	return st->errors ? famfs_fail(EIO, "%" PRIu64 " shadow entries failed",
				       st->errors)
			  : 0;
}
