package files

import (
	"fmt"
	"strings"
)

// No diff library is in go.mod except go-difflib, which arrives through
// testify and is archived; so the line diff edit_file shows is written
// here: Myers' O(ND) algorithm in its linear-space form (the middle-snake
// bisection GNU diff uses), marking changed lines, then grouped into
// unified-diff hunks.

// diffContext is the number of unchanged lines shown around each change.
const diffContext = 3

// diffBudget bounds the work one diff may do. Past it, the remaining
// differences are shown as whole-block replacements: still a correct diff,
// only not the shortest.
const diffBudget = 1 << 24

// unifiedDiff returns the unified diff turning from into to, with the
// given file names in its header ("" when they are equal), and how many
// lines it adds and removes.
func unifiedDiff(fromName, toName, from, to string) (diff string, added, removed int) {
	a, b := diffSplit(from), diffSplit(to)
	ops := diffLines(a, b)
	var out strings.Builder
	for _, h := range diffHunks(ops) {
		if out.Len() == 0 {
			fmt.Fprintf(&out, "--- %s\n+++ %s\n", fromName, toName)
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(h.a, h.na), hunkRange(h.b, h.nb))
		for _, op := range ops[h.start:h.end] {
			var line string
			switch op.kind {
			case '+':
				line = b[op.b0]
				added++
			case '-':
				line = a[op.a0]
				removed++
			default:
				line = a[op.a0]
			}
			out.WriteByte(op.kind)
			out.WriteString(line)
			if !strings.HasSuffix(line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
	}
	return out.String(), added, removed
}

// diffSplit splits s into lines, each keeping its newline; a last line
// without one stays as it is, so a missing final newline is a difference.
func diffSplit(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffOp is one line of an edit script: kind is ' ' (in both), '-' (only
// in a) or '+' (only in b); a0 and b0 are the positions in a and b where
// the line is, or would be.
type diffOp struct {
	kind   byte
	a0, b0 int
}

// diffLines returns an edit script turning a into b.
func diffLines(a, b []string) []diffOp {
	ids := map[string]int{}
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	d := &differ{a: intern(a), b: intern(b), budget: diffBudget}
	d.deleted = make([]bool, len(a))
	d.inserted = make([]bool, len(b))
	d.compare(0, len(a), 0, len(b))
	// Unmarked lines of a and b are the same sequence, so walking both
	// pairs them up.
	ops := make([]diffOp, 0, max(len(a), len(b)))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && d.deleted[i]:
			ops = append(ops, diffOp{'-', i, j})
			i++
		case j < len(b) && d.inserted[j]:
			ops = append(ops, diffOp{'+', i, j})
			j++
		default:
			ops = append(ops, diffOp{' ', i, j})
			i++
			j++
		}
	}
	return ops
}

type differ struct {
	a, b              []int
	deleted, inserted []bool
	budget            int
}

// compare marks the lines that differ between a[a0:a1] and b[b0:b1].
func (d *differ) compare(a0, a1, b0, b1 int) {
	for a0 < a1 && b0 < b1 && d.a[a0] == d.b[b0] {
		a0++
		b0++
	}
	for a0 < a1 && b0 < b1 && d.a[a1-1] == d.b[b1-1] {
		a1--
		b1--
	}
	if a0 < a1 && b0 < b1 {
		x, y, ok := d.split(a0, a1, b0, b1)
		// A split at a corner would not make progress; that never happens
		// for a correct middle snake, but a correct diff matters more.
		if ok && a0 <= x && x <= a1 && b0 <= y && y <= b1 && (x != a0 || y != b0) && (x != a1 || y != b1) {
			d.compare(a0, x, b0, y)
			d.compare(x, a1, y, b1)
			return
		}
	}
	for i := a0; i < a1; i++ {
		d.deleted[i] = true
	}
	for j := b0; j < b1; j++ {
		d.inserted[j] = true
	}
}

// split finds a point on a shortest edit path through a[a0:a1] and
// b[b0:b1] by searching forwards from the start and backwards from the end
// until the two searches meet. Diagonal k holds the points with x-y == k,
// in coordinates relative to (a0, b0).
func (d *differ) split(a0, a1, b0, b1 int) (x, y int, ok bool) {
	n, m := a1-a0, b1-b0
	dmin, dmax := -m, n
	fmid, bmid := 0, n-m
	odd := (fmid-bmid)&1 != 0
	off := m + 1
	fd := make([]int, n+m+3) // furthest x reached forwards, by diagonal
	bd := make([]int, n+m+3) // least x reached backwards, by diagonal
	fd[off+fmid] = 0
	bd[off+bmid] = n
	fmin, fmax, bmin, bmax := fmid, fmid, bmid, bmid
	for d.budget > 0 {
		d.budget -= fmax - fmin + bmax - bmin + 2
		if fmin > dmin {
			fmin--
			fd[off+fmin-1] = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			fd[off+fmax+1] = -1
		} else {
			fmax--
		}
		for k := fmax; k >= fmin; k -= 2 {
			lo, hi := fd[off+k-1], fd[off+k+1]
			x := hi
			if lo >= hi {
				x = lo + 1
			}
			y := x - k
			for x < n && y >= 0 && y < m && d.a[a0+x] == d.b[b0+y] {
				x++
				y++
				d.budget--
			}
			fd[off+k] = x
			if odd && bmin <= k && k <= bmax && bd[off+k] <= x {
				return a0 + x, b0 + y, true
			}
		}
		if bmin > dmin {
			bmin--
			bd[off+bmin-1] = n + m + 1
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			bd[off+bmax+1] = n + m + 1
		} else {
			bmax--
		}
		for k := bmax; k >= bmin; k -= 2 {
			lo, hi := bd[off+k-1], bd[off+k+1]
			x := lo
			if lo >= hi {
				x = hi - 1
			}
			y := x - k
			for x > 0 && x <= n && y > 0 && y <= m && d.a[a0+x-1] == d.b[b0+y-1] {
				x--
				y--
				d.budget--
			}
			bd[off+k] = x
			if !odd && fmin <= k && k <= fmax && x <= fd[off+k] {
				return a0 + x, b0 + y, true
			}
		}
	}
	return 0, 0, false
}

// hunk is a run ops[start:end] shown together, starting at line a of the
// old text and b of the new (0-based), covering na and nb lines.
type hunk struct {
	start, end int
	a, b       int
	na, nb     int
}

// diffHunks groups changes with diffContext unchanged lines around them;
// changes closer than twice that share a hunk.
func diffHunks(ops []diffOp) []hunk {
	var hunks []hunk
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-diffContext)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(end+diffContext, len(ops))
				break
			}
			end = run
		}
		h := hunk{start: start, end: end, a: ops[start].a0, b: ops[start].b0}
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				h.na++
			}
			if op.kind != '-' {
				h.nb++
			}
		}
		hunks = append(hunks, h)
		i = end
	}
	return hunks
}

// hunkRange formats one side of a hunk header as GNU diff does: 1-based
// start, count omitted when 1, and for an empty side the line before it.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
