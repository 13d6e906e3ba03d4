// SPDX-License-Identifier: GPL-2.0-or-later
/* The GET_FMAP reply: an fmap header, then simple or interleaved extents. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "famfs_fuse_abi.h"
#include "fmap_msg.h"

static void put_ext(struct fuse_famfs_simple_ext *se,
		    const struct famfs_omf_extent *e)
{
	memset(se, 0, sizeof(*se));
	se->se_devindex = (uint32_t)e->devindex;
	se->se_offset = e->offset;
	se->se_len = e->len;
}

/* The wire's device index is 32 bits wide. */
static bool ext_fits(const struct famfs_omf_extent *e)
{
	return e->devindex <= UINT32_MAX;
}

ssize_t famfs_fmap_msg_encode(unsigned int file_type,
			      const struct famfs_omf_fmap *fm, uint64_t size,
			      void *buf, size_t buflen)
{
	struct fuse_famfs_fmap_header h = {
		.file_type = (uint8_t)file_type,
		.fmap_version = FAMFS_FMAP_VERSION,
		.ext_type = fm->ext_type,
		.file_size = size,
	};
	uint8_t *p = buf;
	size_t need = sizeof(h);

	if (file_type > FUSE_FAMFS_FILE_LOG)
		return -EINVAL;
	if (fm->ext_type == FAMFS_EXT_SIMPLE) {
		uint32_t n = fm->simple.nextents;

		if (n == 0 || n > FAMFS_MAX_SIMPLE_EXT ||
		    n > FUSE_FAMFS_MAX_EXTENTS)
			return -EINVAL;
		h.nextents = n;
		need += n * sizeof(struct fuse_famfs_simple_ext);
		if (need > buflen)
			return -ENOSPC;
		for (uint32_t i = 0; i < n; i++)
			if (!ext_fits(&fm->simple.se[i]))
				return -EINVAL;
		memset(buf, 0, need);
		memcpy(p, &h, sizeof(h));
		p += sizeof(h);
		for (uint32_t i = 0; i < n; i++) {
			put_ext((struct fuse_famfs_simple_ext *)p,
				&fm->simple.se[i]);
			p += sizeof(struct fuse_famfs_simple_ext);
		}
		return (ssize_t)need;
	}
	if (fm->ext_type != FAMFS_EXT_INTERLEAVE)
		return -EINVAL;

	h.nextents = fm->interleave.niext;
	if (h.nextents == 0 || h.nextents > FAMFS_MAX_IEXT)
		return -EINVAL;
	for (uint32_t i = 0; i < h.nextents; i++) {
		const struct famfs_omf_iext *ie = &fm->interleave.ie[i];

		if (ie->nstrips == 0 || ie->nstrips > FAMFS_MAX_STRIPS ||
		    ie->nstrips > FUSE_FAMFS_MAX_STRIPS ||
		    ie->chunk_size == 0 || ie->chunk_size > UINT32_MAX)
			return -EINVAL;
		for (uint64_t j = 0; j < ie->nstrips; j++)
			if (!ext_fits(&ie->strips[j]))
				return -EINVAL;
		need += sizeof(struct fuse_famfs_iext) +
			ie->nstrips * sizeof(struct fuse_famfs_simple_ext);
	}
	if (need > buflen)
		return -ENOSPC;
	memset(buf, 0, need);
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	for (uint32_t i = 0; i < h.nextents; i++) {
		const struct famfs_omf_iext *ie = &fm->interleave.ie[i];
		struct fuse_famfs_iext w = {
			.ie_nstrips = (uint32_t)ie->nstrips,
			.ie_chunk_size = (uint32_t)ie->chunk_size,
			/* one interleaved extent maps the whole file */
			.ie_nbytes = size,
		};

		memcpy(p, &w, sizeof(w));
		p += sizeof(w);
		for (uint64_t j = 0; j < ie->nstrips; j++) {
			put_ext((struct fuse_famfs_simple_ext *)p,
				&ie->strips[j]);
			p += sizeof(struct fuse_famfs_simple_ext);
		}
	}
	return (ssize_t)need;
}
