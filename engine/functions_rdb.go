package engine

import (
	"encoding/binary"
	"errors"
)

// Function libraries in RDB, as Redis 7.0 writes and reads them
// (rdbSaveFunctions, rdbFunctionLoad): in a snapshot, one
// RDB_OPCODE_FUNCTION2 record per library after the aux fields (the
// library's whole code as an RDB string, LZF-compressed like any string);
// FUNCTION DUMP's payload is the same records followed by the RDB version
// and a CRC64, as DUMP's. The engine only carries the code: the scripting
// package compiles it (ScriptsCodec.Functions / Load).

// functionCode reads the library that follows a function opcode: the code
// of RDB_OPCODE_FUNCTION2, or the 7.0-rc form of RDB_OPCODE_FUNCTION
// (name, engine, an optional description, the body) turned into the code
// Redis builds from it ("#!<engine> name=<name>\n<body>"). Errors are
// rdbFunctionLoad's texts.
func (r *rdbReader) functionCode(typ byte) (string, error) {
	if typ == rdbOpFunction2 {
		code, err := r.strString()
		if err != nil {
			return "", errors.New("Failed loading library payload")
		}
		return code, nil
	}
	name, err := r.strString()
	if err != nil {
		return "", errors.New("Failed loading library name")
	}
	eng, err := r.strString()
	if err != nil {
		return "", errors.New("Failed loading engine name")
	}
	hasDesc, err := r.length()
	if err != nil {
		return "", errors.New("Failed loading library description indicator")
	}
	if hasDesc != 0 {
		if _, err := r.strString(); err != nil {
			return "", errors.New("Failed loading library description")
		}
	}
	body, err := r.strString()
	if err != nil {
		return "", errors.New("Failed loading library blob")
	}
	return "#!" + eng + " name=" + name + "\n" + body, nil
}

// FunctionsPayload is FUNCTION DUMP's reply for the libraries' code, in
// the given order (Redis's createDumpPayload framing around
// rdbSaveFunctions: the records, the RDB version as 2 bytes LE, the CRC64
// of all that as 8 bytes LE). Strings are compressed unless rdbcompression
// is off, as Redis does, so the same libraries give the same bytes.
func (e *Engine) FunctionsPayload(codes []string) []byte {
	w := &rdbWriter{noLZF: e.RDBNoCompression}
	for _, code := range codes {
		w.byte1(rdbOpFunction2)
		w.str(code)
	}
	w.buf = append(w.buf, rdbVersion, 0)
	return binary.LittleEndian.AppendUint64(w.buf, crc64Update(0, w.buf))
}

// Texts of FUNCTION RESTORE's payload errors (functionRestoreCommand).
const (
	ErrFunctionPayload  = "DUMP payload version or checksum are wrong"
	errFunctionDataType = "can not read data type"
	errNotAFunction     = "given type is not a function"
)

// ParseFunctionsPayload reads FUNCTION RESTORE's payload as Redis does:
// after checking its version and checksum, records are read while more
// than the 10-byte footer is left. It returns the libraries' code read
// before the first error and that error's text ("" when none): Redis
// creates each library as it reads it, so a library that fails to compile
// is reported before a malformed record after it. A payload whose footer
// is wrong gives ErrFunctionPayload and no code.
func ParseFunctionsPayload(p []byte) (codes []string, errText string) {
	if !verifyDumpPayload(p) {
		return nil, ErrFunctionPayload
	}
	r := newRDBBytes(p)
	for len(p)-r.pos > 10 {
		typ, err := r.byte1()
		if err != nil {
			return codes, errFunctionDataType
		}
		if typ != rdbOpFunction && typ != rdbOpFunction2 {
			return codes, errNotAFunction
		}
		code, err := r.functionCode(typ)
		if err != nil {
			return codes, err.Error()
		}
		codes = append(codes, code)
	}
	return codes, ""
}
