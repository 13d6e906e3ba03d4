# shellcheck shell=sh
# Fetching Debian packages without touching this host's apt setup, for
# scripts/trixie-cache.sh, tests/e2e/run.sh and tests/e2e/kernel-debs.sh
# (sourced; POSIX sh).
#
# Sets mirror and secmirror (the host's own Debian mirror and security
# mirror, from /etc/apt/sources.list.d/debian.sources, else
# deb.debian.org) and kr (the archive keyring), and defines
#   apt_state DIR ARGS...   apt-get with its own sources.list, lists,
#                           dpkg status and cache, all in DIR

mirror=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/debian.sources \
	2>/dev/null | grep -v security | head -n1)
secmirror=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/debian.sources \
	2>/dev/null | grep security | head -n1)
mirror=${mirror:-http://deb.debian.org/debian}
secmirror=${secmirror:-${mirror%/debian}/debian-security}
kr=/usr/share/keyrings/debian-archive-keyring.gpg

apt_state() {
	_apt_dir=$1
	shift
	apt-get -q -o Dir::Etc::sourcelist="$_apt_dir/sources.list" \
		-o Dir::Etc::sourceparts=/dev/null -o Dir::State::Lists="$_apt_dir/lists" \
		-o Dir::State::status="$_apt_dir/status" -o Dir::Cache="$_apt_dir/cache" \
		-o Debug::NoLocking=1 -o APT::Architecture=amd64 \
		-o APT::Sandbox::User=root "$@"
}

# apt_sources DIR SUITE...: DIR/sources.list with the main component of
# each suite (*-security from the security mirror); when it changes, the
# lists of the old set are dropped.
apt_sources() {
	_apt_dir=$1
	shift
	for _s; do
		case $_s in
		*-security) echo "deb [signed-by=$kr] $secmirror $_s main" ;;
		*) echo "deb [signed-by=$kr] $mirror $_s main" ;;
		esac
	done >"$_apt_dir/sources.list.new"
	if ! cmp -s "$_apt_dir/sources.list.new" "$_apt_dir/sources.list" 2>/dev/null; then
		mv "$_apt_dir/sources.list.new" "$_apt_dir/sources.list"
		rm -f "$_apt_dir/lists/"*_Packages* "$_apt_dir/lists/"*Release* 2>/dev/null || true
	else
		rm -f "$_apt_dir/sources.list.new"
	fi
}
