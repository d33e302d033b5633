package voice

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
	"github.com/domo-agent/domo/servers/voice/stt"
	"github.com/domo-agent/domo/servers/voice/tts"
)

// list is a repeatable flag whose values may also be comma-separated.
type list []string

func (l *list) String() string { return strings.Join(*l, ",") }

func (l *list) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// flags are domo-voice's command line.
type flags struct {
	input, output      string
	stt, tts           list
	sttModel, language string
	ttsModel, voice    string
	keyEnv             string
	speed              float64
	grammar            string
	wakeThreshold      float64
	wakePLP            float64
	finalWait          time.Duration
}

// App is the domo-voice command: its flags and server.
func App() mcpkit.App {
	var f flags
	return mcpkit.App{
		Name:    "domo-voice",
		Summary: "MCP server that speaks and listens: text to speech, speech to text with end-pointing, wake phrases; offline by default (espeak-ng, pocketsphinx)",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&f.input, "input", os.Getenv("DOMO_VOICE_INPUT"), "the microphone: a device `name` from voice_list_devices (default: the system's)")
			fs.StringVar(&f.output, "output", os.Getenv("DOMO_VOICE_OUTPUT"), "the speakers: a device `name` (default: the system's)")
			fs.Var(&f.stt, "stt", "a speech-to-text `backend`, repeatable, tried in order: an OpenAI-compatible base URL (http://127.0.0.1:8080/v1: whisper.cpp server, speaches, LocalAI), a streaming ws:// URL (Deepgram protocol), or pocketsphinx (default: $DOMO_VOICE_STT, else pocketsphinx)")
			fs.Var(&f.tts, "tts", "a text-to-speech `engine`, repeatable, tried in order: an OpenAI-compatible base URL (Kokoro, speaches, LocalAI) or espeak-ng; espeak-ng is always the last resort (default: $DOMO_VOICE_TTS, else espeak-ng)")
			fs.StringVar(&f.sttModel, "stt-model", os.Getenv("DOMO_VOICE_STT_MODEL"), "the speech-to-text `model` to ask servers for (default whisper-1)")
			fs.StringVar(&f.language, "language", os.Getenv("DOMO_VOICE_LANGUAGE"), "the spoken `language` as an ISO 639-1 code (en, de, ...) for speech-to-text servers")
			fs.StringVar(&f.ttsModel, "tts-model", os.Getenv("DOMO_VOICE_TTS_MODEL"), "the text-to-speech `model` to ask servers for (default tts-1)")
			fs.StringVar(&f.voice, "voice", os.Getenv("DOMO_VOICE_VOICE"), "the default `voice` (espeak-ng: en-us; servers: alloy, af_heart, ...)")
			fs.Float64Var(&f.speed, "speed", 1, "the default speaking `rate`, 1 is normal")
			fs.StringVar(&f.keyEnv, "key-env", "DOMO_VOICE_API_KEY", "the environment `variable` holding the API key for speech servers that need one")
			fs.StringVar(&f.grammar, "grammar", os.Getenv("DOMO_VOICE_GRAMMAR"), "a JSGF grammar `file` for pocketsphinx: exact recognition of the sentences it allows")
			fs.Float64Var(&f.wakeThreshold, "wake-threshold", 0, "pocketsphinx's keyphrase `threshold` (-kws_threshold): lower hears the wake phrase more readily, and more falsely (default 1e-20)")
			fs.Float64Var(&f.wakePLP, "wake-phone-loop", 0, "pocketsphinx's phone loop `probability` (-kws_plp); synthetic voices need 1e-20 (default: the program's)")
			fs.DurationVar(&f.finalWait, "final-wait", 5*time.Second, "how long to wait for a streaming backend's final transcript before falling back")
		},
		Build: func(ctx context.Context, args []string, listOnly bool) (*mcpkit.Server, error) {
			if len(args) > 0 {
				return nil, fmt.Errorf("%w: domo-voice takes no arguments (got %q)", mcpkit.ErrUsage, args[0])
			}
			o, err := f.options()
			if err != nil {
				return nil, err
			}
			return NewServer(New(o)).MCP()
		},
	}
}

// options turns the flags into Options.
func (f flags) options() (Options, error) {
	if f.speed < 0.25 || f.speed > 4 {
		return Options{}, fmt.Errorf("%w: --speed %g is out of range: use 0.25 to 4", mcpkit.ErrUsage, f.speed)
	}
	if f.finalWait <= 0 {
		return Options{}, fmt.Errorf("%w: --final-wait must be positive", mcpkit.ErrUsage)
	}
	o := Options{Input: f.input, Output: f.output, Voice: f.voice, Speed: f.speed, FinalWait: f.finalWait}
	key := ""
	if f.keyEnv != "" {
		key = os.Getenv(f.keyEnv)
	}
	grammar := ""
	if f.grammar != "" {
		b, err := os.ReadFile(f.grammar)
		if err != nil {
			return Options{}, fmt.Errorf("%w: --grammar: %v", mcpkit.ErrUsage, err)
		}
		grammar = string(b)
	}
	sttSpecs := f.stt
	if len(sttSpecs) == 0 {
		sttSpecs.Set(os.Getenv("DOMO_VOICE_STT"))
	}
	if len(sttSpecs) == 0 && installed("pocketsphinx_continuous") {
		sttSpecs = list{"pocketsphinx"}
	}
	for _, spec := range sttSpecs {
		switch kind, err := backendKind(spec); {
		case err != nil:
			return Options{}, fmt.Errorf("%w: --stt: %v", mcpkit.ErrUsage, err)
		case kind == "sphinx":
			o.STT = append(o.STT, stt.NewSphinx(stt.SphinxConfig{Grammar: grammar}))
		case kind == "ws":
			o.STT = append(o.STT, stt.NewStreaming(stt.StreamingConfig{URL: spec, APIKey: key, Model: f.sttModel, Language: f.language}))
		case kind == "http":
			o.STT = append(o.STT, stt.NewOpenAI(stt.OpenAIConfig{BaseURL: spec, APIKey: key, Model: f.sttModel, Language: f.language}))
		default:
			return Options{}, fmt.Errorf("%w: --stt %q: espeak-ng speaks, it does not listen", mcpkit.ErrUsage, spec)
		}
	}
	if installed("pocketsphinx_continuous") {
		o.Sphinx = stt.NewSphinx(stt.SphinxConfig{Threshold: f.wakeThreshold, PhoneLoop: f.wakePLP})
	}
	ttsSpecs := f.tts
	if len(ttsSpecs) == 0 {
		ttsSpecs.Set(os.Getenv("DOMO_VOICE_TTS"))
	}
	espeak := false
	for _, spec := range ttsSpecs {
		switch kind, err := backendKind(spec); {
		case err != nil:
			return Options{}, fmt.Errorf("%w: --tts: %v", mcpkit.ErrUsage, err)
		case kind == "espeak":
			o.TTS = append(o.TTS, tts.NewEspeak(tts.EspeakConfig{}))
			espeak = true
		case kind == "http":
			o.TTS = append(o.TTS, tts.NewOpenAI(tts.OpenAIConfig{BaseURL: spec, APIKey: key, Model: f.ttsModel, Voice: f.voice}))
		default:
			return Options{}, fmt.Errorf("%w: --tts %q: want an http(s) URL of an OpenAI-compatible speech server, or espeak-ng", mcpkit.ErrUsage, spec)
		}
	}
	if !espeak && installed("espeak-ng") {
		o.TTS = append(o.TTS, tts.NewEspeak(tts.EspeakConfig{}))
	}
	return o, nil
}

// backendKind names what a --stt or --tts value is.
func backendKind(spec string) (string, error) {
	switch strings.ToLower(spec) {
	case "pocketsphinx", "sphinx":
		return "sphinx", nil
	case "espeak-ng", "espeak":
		return "espeak", nil
	}
	u, err := url.Parse(spec)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is neither a URL nor pocketsphinx/espeak-ng", spec)
	}
	switch u.Scheme {
	case "http", "https":
		return "http", nil
	case "ws", "wss":
		return "ws", nil
	}
	return "", fmt.Errorf("%q: the scheme must be http, https, ws or wss", spec)
}

func installed(program string) bool {
	_, err := exec.LookPath(program)
	return err == nil
}
