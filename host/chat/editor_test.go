package chat

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestEditorReadsAPipe drives the editor as a script would: plain lines
// from a pipe, no prompt or escape codes printed, io.EOF at the end.
func TestEditorReadsAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		w.WriteString("hello\r\n/help\n\nlast line")
		w.Close()
	}()
	var out bytes.Buffer
	history := filepath.Join(t.TempDir(), "domo", "history")
	ed, err := NewEditor(&Term{In: r, Out: &out}, history, []string{"/help", "/quit"})
	if err != nil {
		t.Fatal(err)
	}
	defer ed.Close()
	for _, want := range []string{"hello", "/help", "", "last line"} {
		got, err := ed.ReadLine("you> ")
		if err != nil || got != want {
			t.Fatalf("ReadLine = %q, %v; want %q", got, err, want)
		}
	}
	for range 2 {
		if got, err := ed.ReadLine("you> "); err != io.EOF || got != "" {
			t.Fatalf("at the end ReadLine = %q, %v; want io.EOF", got, err)
		}
	}
	if out.Len() != 0 {
		t.Errorf("printed %q to a pipe", out.String())
	}
	if err := ed.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestPrepareHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "domo", "history")
	if err := prepareHistory(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("history mode %v, want 0600", fi.Mode().Perm())
	}
	// An existing file keeps its lines and loses wider permissions.
	os.WriteFile(path, []byte("earlier\n"), 0o644)
	os.Chmod(path, 0o644)
	if err := prepareHistory(path); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(path)
	data, _ := os.ReadFile(path)
	if fi.Mode().Perm() != 0o600 || string(data) != "earlier\n" {
		t.Errorf("after a second prepare: mode %v, content %q", fi.Mode().Perm(), data)
	}
}

func TestEditorWithoutInput(t *testing.T) {
	ed, err := NewEditor(Plain(io.Discard), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ed.ReadLine("> "); err != io.EOF {
		t.Errorf("ReadLine = %v, want io.EOF", err)
	}
}
