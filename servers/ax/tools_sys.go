package ax

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/ax/x11"
	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

type clipboardReadArgs struct {
	Selection string `json:"selection,omitempty" jsonschema:"clipboard (default: what ctrl+c copied) or primary (the last text selected)"`
}

func (s *Server) clipboardReadTool() mcpkit.Tool {
	return mcpkit.NewTool("clipboard_read",
		"Read the text on the clipboard (or the primary selection).",
		reads,
		func(ctx context.Context, _ mcp.CallToolRequest, in clipboardReadArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, d *Desktop) (string, error) {
				x, err := d.display()
				if err != nil {
					return "", err
				}
				rctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
				defer cancel()
				sel := cmp.Or(in.Selection, "clipboard")
				text, err := x.ReadClipboard(rctx, sel)
				switch {
				case errors.Is(err, x11.ErrNoOwner):
					return fmt.Sprintf("The %s is empty: no app holds it.", sel), nil
				case err != nil:
					return "", err
				case text == "":
					return fmt.Sprintf("The %s holds no text.", sel), nil
				}
				return text, nil
			})
		},
		mcpkit.Title("Read the clipboard"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) { mcpkit.SetEnum(sc, "selection", "clipboard", "primary") }))
}

type clipboardWriteArgs struct {
	Text      string `json:"text" jsonschema:"the text to put on the clipboard"`
	Selection string `json:"selection,omitempty" jsonschema:"clipboard (default) or primary"`
}

func (a *clipboardWriteArgs) Validate() error {
	if len(a.Text) > 1<<20 {
		return errors.New("text is longer than 1 MiB")
	}
	if !utf8.ValidString(a.Text) {
		return errors.New("text is not valid UTF-8")
	}
	return nil
}

func (s *Server) clipboardWriteTool() mcpkit.Tool {
	return mcpkit.NewTool("clipboard_write",
		"Put text on the clipboard, for apps to paste (ctrl+v). domo-ax holds it until another app copies something.",
		mcpkit.Annotations{ReadOnly: mcpkit.No, Destructive: mcpkit.No, Idempotent: mcpkit.Yes, OpenWorld: mcpkit.No},
		func(ctx context.Context, _ mcp.CallToolRequest, in clipboardWriteArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, d *Desktop) (string, error) {
				x, err := d.display()
				if err != nil {
					return "", err
				}
				sel := cmp.Or(in.Selection, "clipboard")
				if err := x.WriteClipboard(sel, in.Text); err != nil {
					return "", err
				}
				return fmt.Sprintf("Put %d characters on the %s.", utf8.RuneCountInString(in.Text), sel), nil
			})
		},
		mcpkit.Title("Write the clipboard"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) { mcpkit.SetEnum(sc, "selection", "clipboard", "primary") }))
}

// SystemInfo describes the machine and desktop session.
type SystemInfo struct {
	OS          string   `json:"os"`
	Kernel      string   `json:"kernel,omitempty"`
	Arch        string   `json:"arch"`
	Hostname    string   `json:"hostname,omitempty"`
	User        string   `json:"user,omitempty"`
	Session     string   `json:"session" jsonschema:"x11, wayland or none"`
	Desktop     string   `json:"desktop,omitempty"`
	Display     string   `json:"display,omitempty"`
	Screen      string   `json:"screen,omitempty" jsonschema:"the screen's size, WIDTHxHEIGHT"`
	Focused     string   `json:"focused_window,omitempty"`
	A11y        string   `json:"accessibility" jsonschema:"whether apps' accessibility trees can be read"`
	Apps        int      `json:"apps" jsonschema:"apps on the accessibility bus"`
	CPUs        int      `json:"cpus"`
	MemTotalMB  int      `json:"mem_total_mb,omitempty"`
	MemAvailMB  int      `json:"mem_available_mb,omitempty"`
	Load        string   `json:"load,omitempty"`
	Uptime      string   `json:"uptime,omitempty"`
	Locale      string   `json:"locale,omitempty"`
	TimeZone    string   `json:"time_zone"`
	LocalTime   string   `json:"local_time"`
	Unsupported []string `json:"unsupported,omitempty" jsonschema:"what domo-ax cannot do in this session, and why"`
}

type systemInfoArgs struct{}

func (s *Server) systemInfoTool() mcpkit.Tool {
	return mcpkit.NewTool("system_info",
		"Facts about the machine and the desktop session: OS, session type (X11 or Wayland), screen size, focused window, accessibility, CPUs, memory, locale, time zone and local time.",
		reads,
		func(ctx context.Context, _ mcp.CallToolRequest, _ systemInfoArgs) (*mcp.CallToolResult, error) {
			s.d.mu.Lock()
			defer s.d.mu.Unlock()
			info := s.d.systemInfo(ctx)
			return mcpkit.Structured(info.String(), info), nil
		},
		mcpkit.Title("System info"),
		mcpkit.Output[SystemInfo](nil))
}

func (d *Desktop) systemInfo(ctx context.Context) SystemInfo {
	now := time.Now()
	zone, _ := now.Zone()
	info := SystemInfo{
		OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(),
		Desktop: os.Getenv("XDG_CURRENT_DESKTOP"), Locale: cmp.Or(os.Getenv("LC_ALL"), os.Getenv("LANG")),
		TimeZone: fmt.Sprintf("%s (%s)", now.Location(), zone), LocalTime: now.Format("Monday 2 January 2006 15:04:05 -0700"),
	}
	if pretty := osRelease(); pretty != "" {
		info.OS = pretty
	}
	info.Kernel = kernelRelease()
	info.Hostname, _ = os.Hostname()
	if me, err := user.Current(); err == nil {
		info.User = me.Username
	}
	meminfo(&info)
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			info.Load = strings.Join(f[:3], " ")
		}
	}
	if b, err := os.ReadFile("/proc/uptime"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			if secs, err := strconv.ParseFloat(f[0], 64); err == nil {
				info.Uptime = (time.Duration(secs) * time.Second).String()
			}
		}
	}
	switch {
	case wayland():
		info.Session = "wayland"
	case os.Getenv("DISPLAY") != "" || d.o.Display != "":
		info.Session = "x11"
	default:
		info.Session = "none"
	}
	if x, err := d.display(); err != nil {
		info.Unsupported = append(info.Unsupported, err.Error())
	} else {
		info.Display = cmp.Or(d.o.Display, os.Getenv("DISPLAY"))
		w, h := x.ScreenSize()
		info.Screen = fmt.Sprintf("%dx%d", w, h)
		if win, ok, err := x.ActiveWindow(); err == nil && ok {
			info.Focused = fmt.Sprintf("%q (pid %d)", win.Title, win.PID)
		}
	}
	if apps, err := d.listApps(ctx); err != nil {
		info.A11y = "unavailable: " + err.Error()
		info.Unsupported = append(info.Unsupported, "reading apps: "+err.Error())
	} else {
		info.A11y, info.Apps = "available", len(apps)
	}
	return info
}

// String renders the facts one per line.
func (s SystemInfo) String() string {
	var b strings.Builder
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	line("OS", s.OS)
	line("Kernel", s.Kernel)
	line("Arch", s.Arch)
	line("Host", s.Hostname)
	line("User", s.User)
	line("Session", s.Session)
	line("Desktop", s.Desktop)
	line("Display", s.Display)
	line("Screen", s.Screen)
	line("Focused window", s.Focused)
	line("Accessibility", fmt.Sprintf("%s (%d apps)", s.A11y, s.Apps))
	line("CPUs", strconv.Itoa(s.CPUs))
	if s.MemTotalMB > 0 {
		line("Memory", fmt.Sprintf("%d MB available of %d MB", s.MemAvailMB, s.MemTotalMB))
	}
	line("Load", s.Load)
	line("Uptime", s.Uptime)
	line("Locale", s.Locale)
	line("Time zone", s.TimeZone)
	line("Local time", s.LocalTime)
	for _, u := range s.Unsupported {
		line("Unsupported", u)
	}
	return b.String()
}

// osRelease is the distribution's PRETTY_NAME.
func osRelease() string {
	f, err := os.Open("/etc/os-release")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
			if u, err := strconv.Unquote(v); err == nil {
				return u
			}
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

func meminfo(info *SystemInfo) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		if err != nil {
			continue
		}
		switch k {
		case "MemTotal":
			info.MemTotalMB = kb / 1024
		case "MemAvailable":
			info.MemAvailMB = kb / 1024
		}
	}
}
