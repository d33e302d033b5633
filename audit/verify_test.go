package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rewrite applies edit to the lines of the log at path (without newlines)
// and writes them back, keeping a final newline unless edit drops it.
func rewrite(t *testing.T, path string, edit func(lines [][]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	if err := os.WriteFile(path, edit(lines), 0o600); err != nil {
		t.Fatal(err)
	}
}

func join(lines [][]byte) []byte {
	return append(bytes.Join(lines, []byte("\n")), '\n')
}

// rehash recomputes a line's hash after an edit, as a careful forger
// would.
func rehash(line []byte) []byte {
	fr, err := parseFrame(line)
	if err != nil {
		panic(err)
	}
	return append(append([]byte{}, fr.body...), []byte(hashPrefix+sha256Hex(fr.body)+hashSuffix)...)
}

func TestVerifyFindsTampering(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(lines [][]byte) []byte
		seq    uint64
		damage string
		detail string // a fragment of the explanation
	}{
		{
			name: "edit a field",
			edit: func(l [][]byte) []byte {
				l[6] = bytes.Replace(l[6], []byte(`"decision":"allow"`), []byte(`"decision":"deny"`), 1)
				return join(l)
			},
			seq: 7, damage: DamageEdited, detail: "does not match its hash",
		},
		{
			name: "edit a field and recompute its hash",
			edit: func(l [][]byte) []byte {
				l[6] = rehash(bytes.Replace(l[6], []byte(`"decision":"allow"`), []byte(`"decision":"deny"`), 1))
				return join(l)
			},
			seq: 7, damage: DamageEdited, detail: "re-hashed",
		},
		{
			name: "edit the last line and recompute its hash",
			edit: func(l [][]byte) []byte {
				n := len(l) - 1
				l[n] = rehash(bytes.Replace(l[n], []byte(`"status":"ok"`), []byte(`"status":"denied"`), 1))
				return join(l)
			},
			seq: 30, damage: DamageEdited, detail: "re-hashed",
		},
		{
			name: "drop a line",
			edit: func(l [][]byte) []byte { return join(append(l[:6:6], l[7:]...)) },
			seq:  7, damage: DamageDropped, detail: "seq 7 is missing before seq 8",
		},
		{
			name: "drop three lines",
			edit: func(l [][]byte) []byte { return join(append(l[:6:6], l[9:]...)) },
			seq:  7, damage: DamageDropped, detail: "seq 7 to 9 are missing",
		},
		{
			name: "drop the first line",
			edit: func(l [][]byte) []byte { return join(l[1:]) },
			seq:  1, damage: DamageDropped, detail: "starts at seq 2",
		},
		{
			name: "drop the last two lines",
			edit: func(l [][]byte) []byte { return join(l[:len(l)-2]) },
			seq:  29, damage: DamageDropped, detail: "ends at seq 28 but writers reached seq 30",
		},
		{
			name: "swap two lines",
			edit: func(l [][]byte) []byte {
				l[6], l[7] = l[7], l[6]
				return join(l)
			},
			seq: 7, damage: DamageReordered, detail: "seq 8 comes before seq 7",
		},
		{
			name: "move a line far back",
			edit: func(l [][]byte) []byte {
				moved := l[20]
				rest := append(l[:20:20], l[21:]...)
				return join(append(rest[:4:4], append([][]byte{moved}, rest[4:]...)...))
			},
			seq: 5, damage: DamageReordered, detail: "seq 21 comes before seq 5",
		},
		{
			name: "repeat a line",
			edit: func(l [][]byte) []byte {
				return join(append(l[:8:8], append([][]byte{l[7]}, l[8:]...)...))
			},
			seq: 8, damage: DamageReordered, detail: "seq 8 appears after seq 8",
		},
		{
			name: "truncate mid-line",
			edit: func(l [][]byte) []byte {
				b := join(l)
				return b[:len(b)-40]
			},
			seq: 30, damage: DamageTorn, detail: "cut short",
		},
		{
			name: "replace a line with junk",
			edit: func(l [][]byte) []byte {
				l[11] = []byte(`{"seq":12,"event":"tool_call_end"}`)
				return join(l)
			},
			seq: 12, damage: DamageEdited, detail: "not an intact audit event",
		},
		{
			name: "insert a forged line with a valid hash",
			edit: func(l [][]byte) []byte {
				forged := rehash(bytes.Replace(l[9], []byte(`"seq":10,`), []byte(`"seq":11,`), 1))
				return join(append(l[:10:10], append([][]byte{forged}, l[10:]...)...))
			},
			seq: 10, damage: DamageEdited, detail: "seq 11 does not chain to seq 10",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeEvents(t, 30, Options{})
			mustVerify(t, path)
			rewrite(t, path, tt.edit)
			r, err := Verify(path)
			if err != nil {
				t.Fatal(err)
			}
			p := r.Problem
			if p == nil {
				t.Fatal("verify found nothing wrong")
			}
			if p.Seq != tt.seq || p.Damage != tt.damage || !strings.Contains(p.Detail, tt.detail) {
				t.Errorf("problem = %v\nwant seq %d, %s, detail containing %q", p, tt.seq, tt.damage, tt.detail)
			}
		})
	}
}

func TestVerifyAcrossRotatedFiles(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(t *testing.T, files []string)
		damage string
	}{
		{"intact", func(*testing.T, []string) {}, ""},
		{"oldest file removed", func(t *testing.T, files []string) { os.Remove(files[0]) }, DamageDropped},
		{"middle file removed", func(t *testing.T, files []string) { os.Remove(files[1]) }, DamageDropped},
		{"files swapped", func(t *testing.T, files []string) {
			os.Rename(files[1], files[1]+".tmp")
			os.Rename(files[2], files[1])
			os.Rename(files[1]+".tmp", files[2])
		}, DamageReordered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeEvents(t, 200, Options{MaxSize: 8 << 10})
			files, err := Files(path)
			if err != nil || len(files) < 4 {
				t.Fatalf("files = %v, %v", files, err)
			}
			tt.edit(t, files)
			r, err := Verify(path)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.damage == "" && r.Problem != nil:
				t.Errorf("verify: %v", r.Problem)
			case tt.damage != "" && (r.Problem == nil || r.Problem.Damage != tt.damage):
				t.Errorf("problem = %v, want %s", r.Problem, tt.damage)
			}
		})
	}
}

func TestVerifyEmptyLog(t *testing.T) {
	r, err := Verify(filepath.Join(t.TempDir(), "none.jsonl"))
	if err != nil || r.Problem != nil || r.Events != 0 {
		t.Errorf("verify of a missing log = %+v, %v; want an intact empty log", r, err)
	}
}
