#!/usr/bin/env bash
# Installs what Domo's tests need and nothing else: the Debian packages that
# are missing, then the npm test peers pinned in tests/peers/package-lock.json.
# Safe to run again: a second run with everything in place installs nothing.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Debian packages the tests need. Add new needs here (chromium, xvfb, ...);
# each is installed only when dpkg reports it missing.
packages=()
# tmux: the chat's end-to-end test types into domo chat and reads the screen.
packages+=(tmux)
# chromium: domo-browser's tests and benchmarks drive Debian's Chromium;
# nothing downloads a browser at run time.
packages+=(chromium)
# The desktop tests of domo-ax: a private X display, a session bus, the
# AT-SPI2 registry, and GTK 3 apps to read (gtk3-widget-factory, and our
# own test app in Python with gi).
packages+=(xvfb xauth x11-utils dbus at-spi2-core python3-gi gir1.2-gtk-3.0 gtk-3-examples matchbox-window-manager)
# python3-pyatspi: domo-ax's benchmark walks the same tree with the Python
# library other desktop servers are built on, side by side.
packages+=(python3-pyatspi)
# domo-voice: PortAudio to build it (cgo), a private PulseAudio server with
# a null sink as the sound card its tests play into and record from, the
# ALSA plugin that routes PortAudio to it, and the offline speech engines.
packages+=(pkg-config portaudio19-dev pulseaudio pulseaudio-utils libasound2-plugins espeak-ng pocketsphinx pocketsphinx-en-us)

# Node.js runs the npm peers. Most machines already have it, not always from
# apt (nvm, a tarball), so ask apt only when the command itself is missing.
if ! command -v node >/dev/null 2>&1; then
	packages+=(nodejs npm)
elif ! command -v npm >/dev/null 2>&1; then
	packages+=(npm)
fi

install_debian_packages() {
	local missing=() pkg
	for pkg in "$@"; do
		if ! dpkg -s "$pkg" >/dev/null 2>&1; then
			missing+=("$pkg")
		fi
	done
	if ((${#missing[@]} == 0)); then
		return 0
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "setup: missing packages: ${missing[*]}; this is not a Debian/Ubuntu system, install them yourself" >&2
		return 1
	fi
	local sudo=()
	if [[ $(id -u) != 0 ]]; then
		if ! command -v sudo >/dev/null 2>&1; then
			echo "setup: need root to install ${missing[*]}, and sudo is not installed" >&2
			return 1
		fi
		sudo=(sudo)
	fi
	echo "setup: installing Debian packages: ${missing[*]}"
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# npm ci wipes node_modules before installing, so the stamp (a copy of the
# lock file it installed) exists only after a complete install of that lock.
install_npm_peers() {
	local dir=tests/peers
	local stamp=$dir/node_modules/.domo-installed-lock.json
	if [[ -f $stamp ]] && cmp -s "$dir/package-lock.json" "$stamp"; then
		echo "setup: npm test peers up to date"
		return 0
	fi
	echo "setup: installing npm test peers into $dir/node_modules"
	# The inspector declares node >=22 but its CLI works on Node 20; keep
	# that warning out of the log. Its postinstall is a no-op when it is a
	# dependency, so whether npm runs it or not does not matter.
	npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
	cp "$dir/package-lock.json" "$stamp"
}

if ((${#packages[@]} > 0)); then
	install_debian_packages "${packages[@]}"
fi
install_npm_peers
