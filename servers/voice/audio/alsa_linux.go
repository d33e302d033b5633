//go:build cgo && !noportaudio && linux

package audio

/*
#cgo pkg-config: alsa
#include <alsa/asoundlib.h>

// ALSA prints to standard error whatever it meets: each card it lacks when
// PortAudio looks for devices, each underrun it recovers from. PortAudio
// reports the failures that matter as errors, which domo-voice passes on.
static void domo_alsa_drop(const char *file, int line, const char *function, int err, const char *fmt, ...) {}
static void domo_alsa_quiet(void) { snd_lib_error_set_handler(domo_alsa_drop); }
*/
import "C"

func init() { C.domo_alsa_quiet() }
