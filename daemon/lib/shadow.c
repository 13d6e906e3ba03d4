// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Upstream's shadow tree (famfs logplay --shadow): DIR/root holds one
 * directory per logged directory and, per logged file, a YAML file of
 * upstream's schema (a "file" mapping: path, size, flags, mode, uid, gid,
 * nextents, and simple_ext_list or striped_ext_list) that upstream's FUSE
 * daemon serves from. Written and read with libyaml.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "internal.h"

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

int famfs_shadow_parse(FILE *f, struct famfs_omf_file *fe)
{
	yaml_parser_t p;
	yaml_document_t d;
	int rc;

	memset(fe, 0, sizeof(*fe));
	if (!yaml_parser_initialize(&p))
		return famfs_fail(ENOMEM, "cannot start a YAML parser");
	yaml_parser_set_input_file(&p, f);
	if (!yaml_parser_load(&p, &d)) {
		rc = famfs_fail(EINVAL, "not YAML: %s at line %zu",
				p.problem ? p.problem : "parse error",
				p.problem_mark.line + 1);
		yaml_parser_delete(&p);
		return rc;
	}
	rc = read_file(&d, fe);
	yaml_document_delete(&d);
	yaml_parser_delete(&p);
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

struct shadow {
	const char *root;
	bool dryrun, test;
	struct famfs_shadow_stats *st;
};

static void shadow_problem(struct shadow *s, const char *path, const char *why)
{
	fprintf(stderr, "famfs shadow: %s: %s\n", path, why);
	s->st->errors++;
}

/* Check the YAML at @path against @fe. */
static void shadow_test(struct shadow *s, const char *path,
			const struct famfs_omf_file *fe)
{
	struct famfs_omf_file got;
	FILE *f = fopen(path, "r");

	if (!f) {
		shadow_problem(s, path, strerror(errno));
		return;
	}
	if (famfs_shadow_parse(f, &got))
		shadow_problem(s, path, famfs_errmsg());
	else if (!same_file(&got, fe))
		shadow_problem(s, path,
			       "its YAML does not match the log entry");
	else
		s->st->tested++;
	fclose(f);
}

static void shadow_file(struct shadow *s, const char *path,
			const struct famfs_omf_file *fe)
{
	struct stat st;
	FILE *f;

	s->st->files++;
	if (lstat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode)) {
			shadow_problem(s, path,
				       "something other than a file is there");
			return;
		}
		s->st->existed++;
	} else if (!s->dryrun) {
		f = fopen(path, "wx");
		if (!f) {
			shadow_problem(s, path, strerror(errno));
			return;
		}
		if (famfs_shadow_emit(fe, f))
			shadow_problem(s, path, famfs_errmsg());
		if (fclose(f))
			shadow_problem(s, path, strerror(errno));
	}
	if (s->test && !s->dryrun)
		shadow_test(s, path, fe);
}

static void shadow_dir(struct shadow *s, const char *path,
		       const struct famfs_omf_mkdir *md)
{
	struct stat st;

	s->st->dirs++;
	if (lstat(path, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			shadow_problem(
				s, path,
				"something other than a directory is there");
		else
			s->st->existed++;
		return;
	}
	if (s->dryrun)
		return;
	if (mkdir(path, md->mode & 07777) < 0 ||
	    chown(path, md->uid, md->gid) < 0)
		shadow_problem(s, path, strerror(errno));
}

static int shadow_entry(const struct famfs_omf_entry *e, uint64_t index,
			void *arg)
{
	struct shadow *s = arg;
	char path[PATH_MAX + FAMFS_PATH_LEN];

	(void)index;
	if (e->type != FAMFS_ENTRY_FILE && e->type != FAMFS_ENTRY_MKDIR)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", s->root,
		 e->type == FAMFS_ENTRY_FILE ? e->file.relpath
					     : e->mkdir.relpath);
	if (e->type == FAMFS_ENTRY_FILE)
		shadow_file(s, path, &e->file);
	else
		shadow_dir(s, path, &e->mkdir);
	return 0;
}

int famfs_shadow_play(struct famfs_dev *dev, const char *dir, bool dryrun,
		      bool test, struct famfs_shadow_stats *st)
{
	char root[PATH_MAX];
	struct shadow s = {root, dryrun, test, st};
	struct famfs_walk w;
	size_t n = strlen(dir);
	struct stat sb;
	int rc;

	memset(st, 0, sizeof(*st));
	if (stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode))
		return famfs_fail(ENOTDIR, "shadow path %s is not a directory",
				  dir);
	/* DIR/root, unless DIR already is one (as upstream) */
	if (n >= 5 && !strcmp(dir + n - 5, "/root"))
		snprintf(root, sizeof(root), "%s", dir);
	else if (snprintf(root, sizeof(root), "%s/root", dir) >=
		 (int)sizeof(root))
		return famfs_fail(ENAMETOOLONG, "shadow path %s is too long",
				  dir);
	if (!dryrun && mkdir(root, 0755) < 0 && errno != EEXIST)
		return famfs_fail(errno, "%s: %s", root, strerror(errno));
	rc = famfs_dev_log_walk(dev, shadow_entry, &s, &w);
	if (rc)
		return rc;
	return st->errors ? famfs_fail(EIO, "%" PRIu64 " shadow entries failed",
				       st->errors)
			  : 0;
}
