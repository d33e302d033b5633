package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/domo-agent/domo/host/config"
)

const configUsage = `Usage:
  domo config show [--reveal]   the effective configuration, defaults and DOMO_* variables applied
  domo config path              where the configuration file is
  domo config edit              open it in $VISUAL or $EDITOR, then check it
  domo config import FILE       add the servers of a Claude Desktop, Cursor or VS Code config
                                (--replace overwrites servers with the same name)
`

func runConfig(ctx context.Context, e *env, args []string) error {
	sub, fs, args := subcommand(e, "config", "show", configUsage, args)
	reveal := fs.Bool("reveal", false, "")
	replace := fs.Bool("replace", false, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	want := map[string]int{"show": 0, "path": 0, "edit": 0, "import": 1}
	n, known := want[sub]
	switch {
	case sub == "help":
		fmt.Fprint(e.stdout, configUsage)
		return nil
	case !known:
		return fmt.Errorf("%w: unknown config command %q (want show, path, edit or import)", errUsage, sub)
	case len(pos) != n:
		return fmt.Errorf("%w: config %s takes %d argument(s)", errUsage, sub, n)
	}
	switch sub {
	case "path":
		fmt.Fprintln(e.stdout, e.configPath)
		return nil
	case "edit":
		return configEdit(ctx, e)
	case "import":
		return configImport(e, pos[0], *replace)
	}
	return configShow(e, *reveal)
}

// configShow prints the configuration as Domo will use it. Values of
// environment variables and headers are masked unless --reveal: they are
// where tokens live.
func configShow(e *env, reveal bool) error {
	cfg, err := e.config()
	if err != nil {
		return err
	}
	type server struct {
		config.Server
		Error string `json:"error,omitempty"`
	}
	servers := map[string]server{}
	for name, s := range cfg.Servers {
		if !reveal {
			s.Env, s.Headers = mask(s.Env), mask(s.Headers)
		}
		out := server{Server: s}
		if s.Err != nil {
			out.Error = s.Err.Error()
		}
		servers[name] = out
	}
	source := e.configPath
	if _, err := os.Stat(e.configPath); errors.Is(err, fs.ErrNotExist) {
		source += " (absent: defaults)"
	}
	return printJSON(e.stdout, struct {
		File        string            `json:"file"`
		MCPServers  map[string]server `json:"mcpServers"`
		LLM         config.LLM        `json:"llm"`
		Permissions any               `json:"permissions"`
		Memory      any               `json:"memory"`
		Audit       any               `json:"audit"`
	}{
		File:       source,
		MCPServers: servers,
		LLM:        cfg.LLM,
		Permissions: map[string]any{
			"mode": cfg.Permissions.Mode, "groups": cfg.Permissions.Groups, "tools": cfg.Permissions.Tools,
			"intent_mode": cfg.Permissions.IntentMode, "intents": cfg.Permissions.Intents,
		},
		Memory: map[string]any{"enabled": cfg.Memory.Enabled},
		Audit:  map[string]any{"path": cfg.Audit.Path, "sync": cfg.Audit.Sync, "max_size_mb": cfg.Audit.MaxSizeMB},
	})
}

func mask(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = "(" + fmt.Sprint(len(v)) + " characters; --reveal shows it)"
	}
	return out
}

// configEdit opens the file in the person's editor and checks it after.
func configEdit(ctx context.Context, e *env) error {
	if _, err := os.Stat(e.configPath); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(e.configPath), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(e.configPath, []byte(configTemplate), 0o600); err != nil {
			return err
		}
	}
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	// $EDITOR may carry flags ("code --wait"); it is split on spaces, not
	// given to a shell.
	argv := append(strings.Fields(editor), e.configPath)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("editor %s: %w", argv[0], err)
	}
	if _, err := config.Load(e.configPath); err != nil {
		return fmt.Errorf("the edited file does not load, fix it and run domo config edit again: %w", err)
	}
	fmt.Fprintf(e.stdout, "%s is valid\n", e.configPath)
	return nil
}

const configTemplate = `{
  "mcpServers": {
    "files": {"command": "domo-files", "args": ["${DOMO_FILES_ROOT:-${HOME}}"]},
    "memory": {"command": "domo-memory"},
    "web": {"command": "domo-web"},
    "browser": {"command": "domo-browser"},
    "ax": {"command": "domo-ax"},
    "voice": {"command": "domo-voice"}
  },
  "llm": {"base_url": "", "model": ""},
  "permissions": {"mode": "smart", "groups": {}},
  "memory": {"enabled": true}
}
`

func configImport(e *env, file string, replace bool) error {
	src, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	res, err := config.Import(e.configPath, src, replace)
	if err != nil {
		return fmt.Errorf("import %s: %w", file, err)
	}
	if len(res.Added) > 0 {
		fmt.Fprintf(e.stdout, "added: %s\n", strings.Join(res.Added, ", "))
	}
	if len(res.Replaced) > 0 {
		fmt.Fprintf(e.stdout, "replaced: %s\n", strings.Join(res.Replaced, ", "))
	}
	if len(res.Skipped) > 0 {
		fmt.Fprintf(e.stdout, "kept (already configured; --replace overwrites): %s\n", strings.Join(res.Skipped, ", "))
	}
	for _, n := range res.Notes {
		fmt.Fprintf(e.stdout, "note: %s\n", n)
	}
	fmt.Fprintf(e.stdout, "saved to %s; their tools go in groups mcp.<server> and ask until you allow them\n", e.configPath)
	return nil
}
