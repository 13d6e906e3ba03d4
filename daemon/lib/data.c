// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reading and writing a file's bytes straight from the device mapping, by
 * its fmap. Used where no kernel famfs serves the data: the daemon's
 * fallback mode, and the tools working on an unmounted device.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

static ssize_t data_rw(const struct famfs_dev *dev,
		       const struct famfs_omf_fmap *fm, uint64_t size,
		       uint64_t off, void *buf, size_t len, bool write)
{
	uint8_t *p = buf;
	size_t done = 0;

	if (!dev->base)
		return famfs_fail(ENXIO, "%s: the device memory is not mapped", dev->path);
	if (write && !dev->writable)
		return famfs_fail(EROFS, "%s is open read-only", dev->path);
	if (off >= size) {
		if (write && len)
			return famfs_fail(EFBIG, "famfs files cannot grow: offset %llu is at or past the end (%llu bytes)",
					  (unsigned long long)off,
					  (unsigned long long)size);
		return 0;
	}
	/* Cut short at the end, as for RLIMIT_FSIZE: the next one fails. */
	if (len > size - off)
		len = (size_t)(size - off);
	while (done < len) {
		uint64_t dev_off, contig;
		size_t n;
		int rc = famfs_fmap_resolve(fm, off + done, &dev_off, &contig);

		if (rc)
			return rc;
		/* The fmap was checked against this device, but be sure. */
		if (famfs_range_exceeds(dev_off, 1, dev->size))
			return famfs_fail(EIO, "fmap points outside the device");
		n = len - done;
		if (n > contig)
			n = (size_t)contig;
		if (n > dev->size - dev_off)
			n = (size_t)(dev->size - dev_off);
		if (write) {
			memcpy(dev->base + dev_off, p + done, n);
			famfs_dev_flush(dev, dev->base + dev_off, n);
		} else {
			famfs_dev_invalidate(dev, dev->base + dev_off, n);
			memcpy(p + done, dev->base + dev_off, n);
		}
		done += n;
	}
	return (ssize_t)done;
}

ssize_t famfs_data_read(const struct famfs_dev *dev,
			const struct famfs_omf_fmap *fm, uint64_t size,
			uint64_t off, void *buf, size_t len)
{
	return data_rw(dev, fm, size, off, buf, len, false);
}

ssize_t famfs_data_write(const struct famfs_dev *dev,
			 const struct famfs_omf_fmap *fm, uint64_t size,
			 uint64_t off, const void *buf, size_t len)
{
	return data_rw(dev, fm, size, off, (void *)buf, len, true);
}

int famfs_data_zero(const struct famfs_dev *dev,
		    const struct famfs_omf_fmap *fm, uint64_t from,
		    uint64_t to)
{
	uint64_t dev_off, contig;
	int rc;

	if (!dev->base || !dev->writable)
		return famfs_fail(EROFS, "%s: the device memory is not writable here",
				  dev->path);
	while (from < to) {
		rc = famfs_fmap_resolve(fm, from, &dev_off, &contig);
		if (rc)
			return rc;
		if (contig > to - from)
			contig = to - from;
		if (famfs_range_exceeds(dev_off, contig, dev->size))
			return famfs_fail(EIO, "fmap points outside the device");
		memset(dev->base + dev_off, 0, (size_t)contig);
		famfs_dev_flush(dev, dev->base + dev_off, (size_t)contig);
		from += contig;
	}
	return 0;
}
