// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Log parsing: the fuzzer's bytes are a log region (header + entries). We
 * check the header, walk the entries, build the namespace and the free map
 * from them, exactly as fsck, the daemon and the writer do. Entries that
 * pass the checks must have fmaps that stay inside the device.
 */
#include <stdlib.h>
#include <string.h>

#include "libfamfs.h"
#include "namespace.h"

static const struct famfs_geometry primary = {
	.dev_size = 1ULL << 30,
	.alloc_unit = 2ULL << 20,
	.data_start = 10ULL << 20,
};

/* the walk's geometry: ADD_DAXDEV entries add devices to it */
static struct famfs_geometry g;

struct state {
	struct famfs_ns ns;
	struct famfs_alloc alloc;
};

static void in_device(uint64_t devindex, uint64_t off, uint64_t len, void *arg)
{
	(void)arg;
	if (devindex >= famfs_geo_ndevs(&g) ||
	    off < famfs_geo_data_start(&g, devindex) ||
	    off + len > famfs_geo_dev_size(&g, devindex) || off + len < off)
		abort();
}

static int apply(const struct famfs_omf_entry *e, uint64_t index, void *arg)
{
	struct state *s = arg;

	famfs_ns_apply(&s->ns, e, index);
	if (e->type == FAMFS_ENTRY_FILE) {
		famfs_fmap_for_each_range(&e->file.fmap, in_device, NULL);
		famfs_alloc_mark_fmap(&s->alloc, &e->file.fmap);
	}
	if (e->type == FAMFS_ENTRY_ADD_DAXDEV)
		famfs_alloc_add_dev(&s->alloc, &e->daxdev);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct famfs_omf_log *log;
	struct famfs_walk walk;
	struct state s;
	uint64_t slots;

	if (size < sizeof(*log))
		return 0;
	log = malloc(size);
	memcpy(log, data, size);
	/*
	 * Give the walk a consistent header often enough to get past it; the
	 * committed count stays the fuzzer's, bounded by what fits.
	 */
	famfs_log_check_header(log, size);
	slots = famfs_log_slots(size);
	if (log->next_index > slots && (log->next_index & 1))
		log->next_index = slots;
	famfs_ns_init(&s.ns, 0755, 0, 0);
	g = primary;
	famfs_alloc_init(&s.alloc, &g);
	famfs_log_walk(log, size, &g, 0, apply, &s, &walk);
	if (walk.valid > slots)
		abort();
	for (uint64_t i = 0; i < walk.valid + 2; i++) {
		struct famfs_node *n = famfs_ns_get(&s.ns, i);
		char path[4096];

		if (n)
			famfs_ns_path(n, path, sizeof(path));
	}
	famfs_alloc_release(&s.alloc);
	famfs_ns_free(&s.ns);
	free(log);
	return 0;
}
