package files

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	tests := []struct {
		name     string
		from, to string
		want     string
	}{
		{name: "equal", from: "a\nb\n", to: "a\nb\n", want: ""},
		{
			name: "one line changed in the middle",
			from: "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
			to:   "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
			want: "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n",
		},
		{
			name: "insert into empty file",
			from: "",
			to:   "x\n",
			want: "--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+x\n",
		},
		{
			name: "delete everything",
			from: "x\ny\n",
			to:   "",
			want: "--- a/f\n+++ b/f\n@@ -1,2 +0,0 @@\n-x\n-y\n",
		},
		{
			name: "missing final newline",
			from: "a\nb",
			to:   "a\nb\n",
			want: "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
		},
		{
			name: "distant changes make two hunks",
			from: "a\n1\n2\n3\n4\n5\n6\n7\nb\n",
			to:   "A\n1\n2\n3\n4\n5\n6\n7\nB\n",
			want: "--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n 3\n@@ -6,4 +6,4 @@\n 5\n 6\n 7\n-b\n+B\n",
		},
		{
			name: "close changes share a hunk",
			from: "a\n1\n2\n3\n4\n5\n6\nb\n",
			to:   "A\n1\n2\n3\n4\n5\n6\nB\n",
			want: "--- a/f\n+++ b/f\n@@ -1,8 +1,8 @@\n-a\n+A\n 1\n 2\n 3\n 4\n 5\n 6\n-b\n+B\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _, _ := unifiedDiff("a/f", "b/f", tt.from, tt.to); got != tt.want {
				t.Errorf("unifiedDiff =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestDiffLinesIsShortest checks the edit script against a dynamic
// programming LCS on many small random inputs: it must turn a into b and
// have no more changes than the shortest script.
func TestDiffLinesIsShortest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	gen := func() []string {
		n := r.IntN(14)
		out := make([]string, n)
		for i := range out {
			out[i] = string(rune('a' + r.IntN(4)))
		}
		return out
	}
	for range 20000 {
		a, b := gen(), gen()
		ops := diffLines(a, b)
		var gotA, gotB []string
		changes := 0
		for _, op := range ops {
			switch op.kind {
			case ' ':
				if a[op.a0] != b[op.b0] {
					t.Fatalf("a=%v b=%v: kept lines differ at %d,%d", a, b, op.a0, op.b0)
				}
				gotA, gotB = append(gotA, a[op.a0]), append(gotB, b[op.b0])
			case '-':
				gotA = append(gotA, a[op.a0])
				changes++
			case '+':
				gotB = append(gotB, b[op.b0])
				changes++
			}
		}
		if strings.Join(gotA, "") != strings.Join(a, "") || strings.Join(gotB, "") != strings.Join(b, "") {
			t.Fatalf("a=%v b=%v: script %v does not rebuild both sides", a, b, ops)
		}
		if want := len(a) + len(b) - 2*lcsLen(a, b); changes != want {
			t.Fatalf("a=%v b=%v: %d changes, shortest has %d", a, b, changes, want)
		}
	}
}

func lcsLen(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// TestDiffBudget checks that a diff too costly to minimise is still a
// correct diff, and comes back quickly.
func TestDiffBudget(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a := make([]string, 40000)
	b := make([]string, 40000)
	for i := range a {
		a[i] = string(rune('a'+r.IntN(20))) + "\n"
		b[i] = string(rune('a'+r.IntN(20))) + "\n"
	}
	ops := diffLines(a, b)
	var gotA, gotB []string
	for _, op := range ops {
		if op.kind != '+' {
			gotA = append(gotA, a[op.a0])
		}
		if op.kind != '-' {
			gotB = append(gotB, b[op.b0])
		}
		if op.kind == ' ' && a[op.a0] != b[op.b0] {
			t.Fatalf("kept lines differ at %d,%d", op.a0, op.b0)
		}
	}
	if strings.Join(gotA, "") != strings.Join(a, "") || strings.Join(gotB, "") != strings.Join(b, "") {
		t.Fatal("script does not rebuild both sides")
	}
}
