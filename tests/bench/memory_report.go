package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// printMemoryFigures prints one size's figures side by side, with ratios.
func printMemoryFigures(w io.Writer, n int, o options, servers []memoryServer, figs []memoryFigures) {
	d, r := figs[0], figs[1]
	fmt.Fprintf(w, "\n%s memories:\n", thousands(n))
	fmt.Fprintf(w, "  %-36s %16s %22s %12s\n", "", servers[0].name, servers[1].name, "domo better")
	row := func(label, dv, rv, ratio string) {
		fmt.Fprintf(w, "  %-36s %16s %22s %12s\n", label, dv, rv, ratio)
	}
	times := func(a, b float64) string { return fmt.Sprintf("%.1f×", b/a) }
	rate := func(f memoryFigures) float64 { return float64(f.ingested) / f.ingest.Seconds() }

	row("store, total", seconds(d.ingest)+ingestNote(d, n), seconds(r.ingest)+ingestNote(r, n), ratioIfWhole(d, r, n))
	row("store, memories/s", fmt.Sprintf("%.0f", rate(d)), fmt.Sprintf("%.0f", rate(r)), times(rate(r), rate(d)))
	row(fmt.Sprintf("store, last call of %d", memoryBatch), fmt.Sprintf("%.1f ms", ms(d.lastBatch)), fmt.Sprintf("%.1f ms", ms(r.lastBatch)), times(ms(d.lastBatch), ms(r.lastBatch)))
	row("new memories it reported", thousands(d.created), thousands(r.created), "")
	row("recall p50", fmt.Sprintf("%.2f ms", ms(median(d.recall))), fmt.Sprintf("%.2f ms", ms(median(r.recall))), times(ms(median(d.recall)), ms(median(r.recall))))
	row("recall p95", fmt.Sprintf("%.2f ms", ms(quantile(d.recall, 0.95))), fmt.Sprintf("%.2f ms", ms(quantile(r.recall, 0.95))), times(ms(quantile(d.recall, 0.95)), ms(quantile(r.recall, 0.95))))
	row("recall queries timed", strconv.Itoa(len(d.recall)), strconv.Itoa(len(r.recall)), "")
	row("results per query (mean)", fmt.Sprintf("%.1f", float64(d.hits)/float64(len(d.recall))), fmt.Sprintf("%.1f", float64(r.hits)/float64(len(r.recall))), "")
	row("results holding the query as is", percent(d.matching, d.hits), percent(r.matching, r.hits), "")
	row("answer size (mean)", kib(d.bytes/len(d.recall)), kib(r.bytes/len(r.recall)), "")
	for _, m := range []struct {
		label string
		d, r  int64
	}{
		{"VmRSS after store", d.afterIngest.rss, r.afterIngest.rss},
		{"VmHWM after store", d.afterIngest.hwm, r.afterIngest.hwm},
		{"VmRSS after recall", d.afterRecall.rss, r.afterRecall.rss},
		{"VmHWM after recall", d.afterRecall.hwm, r.afterRecall.hwm},
	} {
		row(m.label, mib(m.d), mib(m.r), times(float64(m.d), float64(m.r)))
	}
	row("on disk", mib(d.disk), mib(r.disk), times(float64(d.disk), float64(r.disk)))
	for i, f := range figs {
		if f.created < f.ingested {
			fmt.Fprintf(w, "  %s reported %s of the %s memories stored as updates of near-duplicates rather than new.\n",
				servers[i].name, thousands(f.ingested-f.created), thousands(f.ingested))
		}
		if f.filled > 0 {
			fmt.Fprintf(w, "  %s stored %s memories over MCP in the %s limit; the other %s were written to its file and the server restarted (its VmRSS after store is of the restarted process).\n",
				servers[i].name, thousands(f.ingested), o.memoryLimit, thousands(f.filled))
		} else if f.ingested < n {
			fmt.Fprintf(w, "  %s stored only %s memories in the %s limit; recall ran over those.\n", servers[i].name, thousands(f.ingested), o.memoryLimit)
		}
		if len(f.recall) < o.memoryQueries {
			fmt.Fprintf(w, "  %s answered %d of %d recall queries in the %s limit; its percentiles are over those.\n", servers[i].name, len(f.recall), o.memoryQueries, o.memoryLimit)
		}
	}
}

func ingestNote(f memoryFigures, n int) string {
	if f.ingested < n {
		return "*"
	}
	return ""
}

// ratioIfWhole compares total store times only when both stored the whole
// corpus over MCP.
func ratioIfWhole(d, r memoryFigures, n int) string {
	if d.ingested < n || r.ingested < n {
		return "(partial)"
	}
	return fmt.Sprintf("%.1f×", r.ingest.Seconds()/d.ingest.Seconds())
}

// procMem is a process's resident memory, in bytes.
type procMem struct{ rss, hwm int64 }

func readProcMem(pid int) procMem {
	var m procMem
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m
	}
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			m.rss = kb << 10
		case "VmHWM":
			m.hwm = kb << 10
		}
	}
	return m
}

func parseSizes(s string) ([]int, error) {
	var sizes []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		sizes = append(sizes, n)
	}
	slices.Sort(sizes)
	return sizes, nil
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func percent(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(of))
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
func kib(n int) string               { return fmt.Sprintf("%.1f KiB", float64(n)/1024) }
func mib(n int64) string             { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
