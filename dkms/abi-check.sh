#!/bin/sh
# Check that the famfs definitions our patches add to include/uapi/linux/
# fuse.h and the shared user-space header include/uapi/famfs_fuse_abi.h
# describe the same wire format: every number, size and field offset.
#
#   dkms/abi-check.sh [TREE]   TREE: a prepared tree (default build/tree,
#                              made by build.sh or build.sh --prepare; the
#                              7.3 series' is wherever its build put it)
# The INIT flag is compared with the one famfs_fuse_abi.h gives for the
# tree's protocol minor.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tree=${1:-$here/build/tree}
fh=$tree/include/uapi/linux/fuse.h
[ -f "$fh" ] || { echo "abi-check: no $fh (run build.sh --prepare)" >&2; exit 1; }
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT

# One list of facts, written against either header's names.
facts() { # $1: prefix for the limits that are named differently
	cat <<EOC
#include <stdio.h>
#include <stddef.h>
#define P(x) printf("%s %llu\n", #x, (unsigned long long)(x))
#define O(s, f) printf("%s.%s %zu/%zu\n", #s, #f, offsetof(struct s, f), \
			sizeof(((struct s *)0)->f))
int main(void)
{
	printf("dax_fmap %llu\n", (unsigned long long)$1DAX_FMAP);
	P(FUSE_GET_FMAP); P(FUSE_GET_DAXDEV);
	P(FUSE_FAMFS_FILE_REG); P(FUSE_FAMFS_FILE_SUPERBLOCK);
	P(FUSE_FAMFS_FILE_LOG); P(FUSE_FAMFS_EXT_SIMPLE);
	P(FUSE_FAMFS_EXT_INTERLEAVE);
	P(FUSE_FAMFS_MAX_EXTENTS); P(FUSE_FAMFS_MAX_STRIPS);
	printf("fmap_max %d\n", $1FMAP_MAX);
	printf("fmap_version %d\n", $1FMAP_VERSION);
	printf("name_max %d\n", $1NAME_MAX);
	printf("daxdevs %d\n", $1DAXDEVS);
	P(sizeof(struct fuse_famfs_fmap_header));
	O(fuse_famfs_fmap_header, file_type); O(fuse_famfs_fmap_header, fmap_version);
	O(fuse_famfs_fmap_header, ext_type); O(fuse_famfs_fmap_header, nextents);
	O(fuse_famfs_fmap_header, file_size);
	P(sizeof(struct fuse_famfs_simple_ext));
	O(fuse_famfs_simple_ext, se_devindex); O(fuse_famfs_simple_ext, se_offset);
	O(fuse_famfs_simple_ext, se_len);
	P(sizeof(struct fuse_famfs_iext));
	O(fuse_famfs_iext, ie_nstrips); O(fuse_famfs_iext, ie_chunk_size);
	O(fuse_famfs_iext, ie_nbytes);
	P(sizeof(struct fuse_get_daxdev_in)); O(fuse_get_daxdev_in, daxdev_num);
	P(sizeof(struct fuse_daxdev_out));
	O(fuse_daxdev_out, index); O(fuse_daxdev_out, name);
	return 0;
}
EOC
}
minor=$(sed -n 's/^#define FUSE_KERNEL_MINOR_VERSION[[:space:]]*\([0-9]*\).*/\1/p' "$fh")
[ -n "$minor" ] || { echo "abi-check: no FUSE_KERNEL_MINOR_VERSION in $fh" >&2; exit 1; }
{ echo "#include \"$fh\""; echo '#define K_DAX_FMAP FUSE_DAX_FMAP'
  echo '#define K_FMAP_MAX FUSE_FAMFS_FMAP_MAX'
  echo '#define K_FMAP_VERSION FUSE_FAMFS_FMAP_VERSION'
  echo '#define K_NAME_MAX FUSE_FAMFS_DAXDEV_NAME_MAX'
  echo '#define K_DAXDEVS FUSE_FAMFS_MAX_DAXDEVS'; facts K_; } >"$w/k.c"
{ echo "#include \"$here/include/uapi/famfs_fuse_abi.h\""
  echo "#define U_DAX_FMAP FUSE_DAX_FMAP_FOR_MINOR($minor)"
  echo '#define U_FMAP_MAX FAMFS_FMAP_MAX'
  echo '#define U_FMAP_VERSION FAMFS_FMAP_VERSION'
  echo '#define U_NAME_MAX DAXDEV_NAME_MAX'
  echo '#define U_DAXDEVS FAMFS_DAXDEV_TABLE_MIN'; facts U_; } >"$w/u.c"
cc=${CC:-cc}
$cc -o "$w/k" "$w/k.c" && $cc -o "$w/u" "$w/u.c"
"$w/k" >"$w/k.txt"
"$w/u" >"$w/u.txt"
if diff -u "$w/k.txt" "$w/u.txt" >"$w/diff"; then
	echo "abi-check: uapi fuse.h (protocol 7.$minor) and famfs_fuse_abi.h agree ($(wc -l <"$w/k.txt") facts)"
else
	echo "abi-check: uapi fuse.h (-) and famfs_fuse_abi.h (+) differ:" >&2
	cat "$w/diff" >&2
	exit 1
fi
