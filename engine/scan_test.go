package engine

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"testing"

	"limitdb/resp"
)

// parseScan decodes a SCAN reply: the next cursor and the keys.
func parseScan(t *testing.T, b string) (string, []string) {
	t.Helper()
	br := bufio.NewReader(strings.NewReader(b))
	line := func() string {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("bad reply %q", b)
		}
		return strings.TrimSuffix(l, "\r\n")
	}
	bulk := func() string {
		n, _ := strconv.Atoi(line()[1:])
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			t.Fatal(err)
		}
		return string(buf[:n])
	}
	if h := line(); h != "*2" {
		t.Fatalf("bad reply %q", b)
	}
	cur := bulk()
	n, _ := strconv.Atoi(line()[1:])
	keys := make([]string, n)
	for i := range keys {
		keys[i] = bulk()
	}
	return cur, keys
}

// TestScanGuarantee: with random inserts and deletes between SCAN calls
// (the table growing and shrinking), every key present from the first to
// the last call is returned, and the scan ends.
func TestScanGuarantee(t *testing.T) {
	var r Rand
	r.Seed(99)
	for round := 0; round < 30; round++ {
		e := New()
		c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1_000_000}
		nStable := 1 + r.Intn(300)
		for i := 0; i < nStable; i++ {
			run(c, "SET", "s:"+strconv.Itoa(i), "v")
		}
		nTmp := r.Intn(3000)
		for i := 0; i < nTmp; i++ {
			run(c, "SET", "t:"+strconv.Itoa(i), "v")
		}
		seen := map[string]bool{}
		cursor := "0"
		count := strconv.Itoa(1 + r.Intn(20))
		next := nTmp
		for steps := 0; ; steps++ {
			if steps > 100000 {
				t.Fatal("scan does not end")
			}
			cur, keys := parseScan(t, run(c, "SCAN", cursor, "COUNT", count))
			for _, k := range keys {
				seen[k] = true
			}
			if cur == "0" {
				break
			}
			cursor = cur
			// mutate: grow or shrink
			switch r.Intn(3) {
			case 0:
				for i := 0; i < r.Intn(200); i++ {
					run(c, "SET", "t:"+strconv.Itoa(next), "v")
					next++
				}
			case 1:
				for i := 0; i < r.Intn(400); i++ {
					run(c, "DEL", "t:"+strconv.Itoa(r.Intn(next+1)))
				}
			}
		}
		for i := 0; i < nStable; i++ {
			if !seen["s:"+strconv.Itoa(i)] {
				t.Fatalf("round %d: scan missed s:%d", round, i)
			}
		}
	}
}
