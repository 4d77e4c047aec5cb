# Sourced by the scripts: apt_install PACKAGE-ARGUMENTS... installs from Debian as root (one
# `apt-get update` a run), or says what to run and exits; need WHAT PROGRAM... -- PACKAGE-ARGUMENTS...
# installs them unless every PROGRAM is there.
apt_updated=no
apt_install() {
  if [ "$(id -u)" != 0 ]; then
    echo "missing: run 'sudo apt-get install -y $*', then this again" >&2
    exit 1
  fi
  if [ "$apt_updated" = no ]; then
    echo "installing from Debian: $*" >&2
    apt-get update -qq
    apt_updated=yes
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

need() {
  local what=$1 missing=no
  shift
  while [ "$1" != "--" ]; do
    command -v "$1" >/dev/null 2>&1 || missing=yes
    shift
  done
  shift
  [ "$missing" = no ] && return 0
  echo "$what is missing" >&2
  apt_install "$@"
}
