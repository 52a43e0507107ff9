package engine

// LCS (Redis 7.0 t_string.c lcsCommand).

const (
	errLCSNotStr   = "ERR The specified keys must contain string values"
	errLCSLenAndID = "ERR If you want both the length and indexes, please just use IDX."
)

func init() {
	Register(
		&Command{Name: "lcs", Arity: -3, Flags: "readonly", FirstKey: 1, LastKey: 2, Step: 1, Group: "string", Since: "7.0.0",
			Summary: "Finds the longest common substring.", Run: cmdLCS},
	)
}

// cmdLCS: LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN] —
// the longest common subsequence of two strings (a missing key is the
// empty string). Reply: the subsequence (bulk); with LEN its length; with
// IDX a map {"matches": [[[a1 a2] [b1 b2] (len)] …], "len": n} listing
// the matched ranges from the end, those shorter than MINMATCHLEN left
// out. Errors: the "must contain string values" error for another type,
// not an integer for MINMATCHLEN, syntax error, LEN with IDX.
func cmdLCS(c *Ctx, argv [][]byte) {
	ea, eb := c.lookupRead(argv[1]), c.lookupRead(argv[2])
	if (ea != nil && ea.kind != KindString) || (eb != nil && eb.kind != KindString) {
		c.W.Error(errLCSNotStr)
		return
	}
	var a, b string
	if ea != nil {
		a = ea.str()
	}
	if eb != nil {
		b = eb.str()
	}
	var getLen, getIdx, withLen bool
	var minLen int64
	for j := 3; j < len(argv); j++ {
		switch opt := argv[j]; {
		case EqualFold(opt, "idx"):
			getIdx = true
		case EqualFold(opt, "len"):
			getLen = true
		case EqualFold(opt, "withmatchlen"):
			withLen = true
		case EqualFold(opt, "minmatchlen") && j+1 < len(argv):
			n, ok := ParseIntB(argv[j+1])
			if !ok {
				c.W.Error(ErrNotInt)
				return
			}
			minLen = max(n, 0)
			j++
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	if getLen && getIdx {
		c.W.Error(errLCSLenAndID)
		return
	}
	alen, blen := len(a), len(b)
	w := blen + 1
	tbl := make([]uint32, (alen+1)*w)
	for i := 1; i <= alen; i++ {
		for j := 1; j <= blen; j++ {
			if a[i-1] == b[j-1] {
				tbl[i*w+j] = tbl[(i-1)*w+j-1] + 1
			} else {
				tbl[i*w+j] = max(tbl[(i-1)*w+j], tbl[i*w+j-1])
			}
		}
	}
	total := int(tbl[alen*w+blen])
	if getLen {
		c.W.Int(int64(total))
		return
	}
	res := make([]byte, total)
	var ranges [][5]int64
	idx := total
	aStart, aEnd, bStart, bEnd := alen, 0, 0, 0
	emit := false
	for i, j := alen, blen; i > 0 && j > 0; {
		if a[i-1] == b[j-1] {
			res[idx-1] = a[i-1]
			if aStart == alen {
				aStart, aEnd, bStart, bEnd = i-1, i-1, j-1, j-1
			} else if aStart == i && bStart == j {
				aStart--
				bStart--
			} else {
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			if tbl[(i-1)*w+j] > tbl[i*w+j-1] {
				i--
			} else {
				j--
			}
			if aStart != alen {
				emit = true
			}
		}
		if emit {
			ml := int64(aEnd - aStart + 1)
			if minLen == 0 || ml >= minLen {
				ranges = append(ranges, [5]int64{int64(aStart), int64(aEnd), int64(bStart), int64(bEnd), ml})
			}
			aStart = alen
			emit = false
		}
	}
	if !getIdx {
		c.W.Bulk(res)
		return
	}
	c.W.Map(2)
	c.W.BulkString("matches")
	c.W.Array(len(ranges))
	for _, r := range ranges {
		if withLen {
			c.W.Array(3)
		} else {
			c.W.Array(2)
		}
		c.W.Array(2)
		c.W.Int(r[0])
		c.W.Int(r[1])
		c.W.Array(2)
		c.W.Int(r[2])
		c.W.Int(r[3])
		if withLen {
			c.W.Int(r[4])
		}
	}
	c.W.BulkString("len")
	c.W.Int(int64(total))
}
