package engine

import (
	"math"
	"strconv"
)

// GEOADD: Redis 7.0's geo.c stores a position as a sorted-set member whose
// score is the 52-bit interleaved geohash of its coordinates; GEOADD is
// ZADD with that score, and propagates as that ZADD. The other GEO
// commands (GEOPOS, GEODIST, GEOSEARCH, …) are not implemented.

const (
	geoLongMin = -180.0
	geoLongMax = 180.0
	geoLatMin  = -85.05112878
	geoLatMax  = 85.05112878
	geoStepMax = 26 // 26*2 = 52 bits
)

func init() {
	Register(&Command{Name: "geoadd", Arity: -5, Flags: "write denyoom", FirstKey: 1, LastKey: 1, Step: 1,
		Group: "geo", Since: "3.2.0", Summary: "Adds one or more members to a geospatial index. The key is created if it doesn't exist.", Run: cmdGeoAdd})
}

// geoHash52 is geohashEncodeWGS84 at GEO_STEP_MAX, aligned to 52 bits:
// latitude bits in the even positions, longitude bits in the odd ones.
func geoHash52(long, lat float64) uint64 {
	latOff := (lat - geoLatMin) / (geoLatMax - geoLatMin) * (1 << geoStepMax)
	longOff := (long - geoLongMin) / (geoLongMax - geoLongMin) * (1 << geoStepMax)
	return interleave64(uint32(latOff), uint32(longOff))
}

// interleave64 is geohash.c's: x's bits go to the even positions, y's to
// the odd ones.
func interleave64(x, y uint32) uint64 {
	spread := func(v uint64) uint64 {
		v = (v | v<<16) & 0x0000FFFF0000FFFF
		v = (v | v<<8) & 0x00FF00FF00FF00FF
		v = (v | v<<4) & 0x0F0F0F0F0F0F0F0F
		v = (v | v<<2) & 0x3333333333333333
		v = (v | v<<1) & 0x5555555555555555
		return v
	}
	return spread(uint64(x)) | spread(uint64(y))<<1
}

// cmdGeoAdd: GEOADD key [NX|XX] [CH] longitude latitude member [...] —
// ZADD's reply. Errors: ErrSyntax (NX with XX, or not triples),
// ErrNotFloat, `ERR invalid longitude,latitude pair <lon>,<lat>` (%f),
// WRONGTYPE.
func cmdGeoAdd(c *Ctx, argv [][]byte) {
	longIdx := 2
	xx, nx := false, false
	for ; longIdx < len(argv); longIdx++ {
		a := argv[longIdx]
		switch {
		case EqualFold(a, "nx"):
			nx = true
		case EqualFold(a, "xx"):
			xx = true
		case EqualFold(a, "ch"):
		default:
			goto done
		}
	}
done:
	if (len(argv)-longIdx)%3 != 0 || (xx && nx) {
		c.W.Error(ErrSyntax)
		return
	}
	elements := (len(argv) - longIdx) / 3
	zargv := make([][]byte, 0, longIdx+elements*2)
	zargv = append(zargv, []byte("zadd"))
	zargv = append(zargv, argv[1:longIdx]...)
	for i := 0; i < elements; i++ {
		var xy [2]float64
		for j := range xy {
			f, ok := ParseFloatB(argv[longIdx+i*3+j])
			if !ok || math.IsNaN(f) {
				c.W.Error(ErrNotFloat)
				return
			}
			xy[j] = f
		}
		if xy[0] < geoLongMin || xy[0] > geoLongMax || xy[1] < geoLatMin || xy[1] > geoLatMax {
			c.W.Error("ERR invalid longitude,latitude pair " + strconv.FormatFloat(xy[0], 'f', 6, 64) + "," + strconv.FormatFloat(xy[1], 'f', 6, 64))
			return
		}
		score := strconv.AppendUint(nil, geoHash52(xy[0], xy[1]), 10)
		zargv = append(zargv, score, argv[longIdx+i*3+2])
	}
	// propagated as the ZADD it runs, as Redis's replaceClientCommandVector
	c.Rewrite(Args("ZADD").B(zargv[1:]...))
	cmdZAdd(c, zargv)
}
