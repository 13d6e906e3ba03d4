// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The devices of a famfs. The primary's superblock names the primary;
 * each ADD_DAXDEV entry of the log adds one more, keyed by the uuid its
 * own (secondary) superblock carries, since device names differ from
 * host to host. Indices are dense and in log order: entry for index N
 * comes after the one for N-1, and extents name devices by index.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

uint64_t famfs_geo_dev_size(const struct famfs_geometry *g, uint64_t i)
{
	if (i == 0)
		return g->dev_size;
	return i < famfs_geo_ndevs(g) ? g->dev[i].size : 0;
}

uint64_t famfs_geo_data_start(const struct famfs_geometry *g, uint64_t i)
{
	return i == 0 ? g->data_start : FAMFS_SB_REGION;
}

int famfs_geo_find(const struct famfs_geometry *g,
		   const uint8_t uuid[FAMFS_UUID_LEN])
{
	for (uint32_t i = 0; i < famfs_geo_ndevs(g); i++)
		if (!memcmp(g->dev[i].uuid, uuid, FAMFS_UUID_LEN))
			return (int)i;
	return -1;
}

static bool uuid_is_null(const uint8_t uuid[FAMFS_UUID_LEN])
{
	static const uint8_t zero[FAMFS_UUID_LEN];

	return !memcmp(uuid, zero, FAMFS_UUID_LEN);
}

int famfs_geo_check_add(const struct famfs_geometry *g,
			const struct famfs_omf_add_daxdev *d)
{
	uint32_t n = famfs_geo_ndevs(g);
	char u[37];
	int at;

	famfs_uuid_str(d->uuid, u);
	if (d->index == 0)
		return famfs_fail(EUCLEAN, "device %s is added as index 0, which is the primary's",
				  u);
	if (d->index >= FAMFS_MAX_DEVS)
		return famfs_fail(EUCLEAN, "device %s is added as index %u; a famfs has at most %d devices",
				  u, d->index, FAMFS_MAX_DEVS);
	if (uuid_is_null(d->uuid))
		return famfs_fail(EUCLEAN, "device index %u is added with a null uuid",
				  d->index);
	at = famfs_geo_find(g, d->uuid);
	if (d->index < n) {
		/* Walking a log again meets the devices it added already. */
		if (at == (int)d->index && g->dev[at].size == d->size)
			return 0;
		return famfs_fail(EUCLEAN, "device index %u is added again, as %s: an earlier entry added it",
				  d->index, u);
	}
	if (d->index > n)
		return famfs_fail(EUCLEAN, "device %s is added as index %u before index %u",
				  u, d->index, n);
	if (at >= 0)
		return famfs_fail(EUCLEAN, "device %s is added as index %u but is index %d already",
				  u, d->index, at);
	/* Sums of extents (16 of them, or 16 strips) must not overflow. */
	if (d->size > FAMFS_MAX_DEV_SIZE)
		return famfs_fail(EUCLEAN, "device %s (index %u) is recorded as %llu bytes, more than the %llu a device may have",
				  u, d->index, (unsigned long long)d->size,
				  (unsigned long long)FAMFS_MAX_DEV_SIZE);
	if (d->size < FAMFS_SB_REGION + g->alloc_unit)
		return famfs_fail(EUCLEAN, "device %s (index %u) is %llu bytes, too small for a superblock and one allocation unit",
				  u, d->index, (unsigned long long)d->size);
	return 0;
}

void famfs_geo_add(struct famfs_geometry *g,
		   const struct famfs_omf_add_daxdev *d)
{
	if (d->index != famfs_geo_ndevs(g) || d->index >= FAMFS_MAX_DEVS)
		return;
	g->dev[d->index].size = d->size;
	memcpy(g->dev[d->index].uuid, d->uuid, FAMFS_UUID_LEN);
	g->ndevs = d->index + 1;
}
