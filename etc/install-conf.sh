#!/bin/sh
# meson install step: put the default famfs.conf in place unless the
# administrator already has one (an edited configuration is never
# overwritten by "make install"; packages handle it as a conffile).
#   install-conf.sh SOURCE  (DESTDIR from the environment, as meson sets it)
set -eu
src=$1
dest=${DESTDIR:-}/etc/famfs/famfs.conf
if [ -e "$dest" ]; then
	echo "famfs: keeping the existing $dest"
	exit 0
fi
mkdir -p "$(dirname "$dest")"
cp "$src" "$dest"
chmod 0644 "$dest"
