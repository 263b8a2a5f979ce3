package sqlstore

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// The export format (docs/deploying.md, "Export and import"): JSON lines.
// The first line is the header: the format's name and version, the
// migrations the database had, and every table with its columns and their
// kinds. Then one line per row, {"table": …, "row": {column: value}}, the
// tables in the header's order and each table's rows in primary-key order.
// The last line is {"end": {"rows": {table: count}}}: a file without it, or
// whose counts differ, is truncated and refused.

// DumpFormat is the name of the export format, in the header's "format".
const DumpFormat = "switchboard-export"

// DumpVersion is the version of the export format this code writes, and
// the only one it reads.
const DumpVersion = 1

// dumpHeader is the first line of an export.
type dumpHeader struct {
	Format     string      `json:"format"`
	Version    int         `json:"version"`
	ExportedAt string      `json:"exported_at"`
	Engine     string      `json:"engine"`
	Migrations []string    `json:"migrations"`
	Tables     []dumpTable `json:"tables"`
}

// dumpTable describes one table in the header.
type dumpTable struct {
	Name       string       `json:"name"`
	Columns    []dumpColumn `json:"columns"`
	PrimaryKey []string     `json:"primary_key,omitempty"`
}

// dumpColumn is one column of a table: its name and kind.
type dumpColumn struct {
	Name string     `json:"name"`
	Type columnKind `json:"type"`
}

// dumpLine is every line after the header: a row, or the end.
type dumpLine struct {
	Table string                     `json:"table,omitempty"`
	Row   map[string]json.RawMessage `json:"row,omitempty"`
	End   *dumpEnd                   `json:"end,omitempty"`
}

// dumpEnd is the last line: how many rows each table had.
type dumpEnd struct {
	Rows map[string]int64 `json:"rows"`
}

// dumpWriter writes an export.
type dumpWriter struct {
	w      *bufio.Writer
	counts map[string]int64
	tables []dumpTable
}

func newDumpWriter(w io.Writer) *dumpWriter {
	return &dumpWriter{w: bufio.NewWriterSize(w, 64<<10), counts: map[string]int64{}}
}

func (d *dumpWriter) header(h *dumpHeader) error {
	h.Format, h.Version = DumpFormat, DumpVersion
	d.tables = h.Tables
	for _, t := range h.Tables {
		d.counts[t.Name] = 0
	}
	return d.line(h)
}

// row writes one row of t; values are canonical (see canonicalValue), in
// the order of t's columns.
func (d *dumpWriter) row(t *dumpTable, values []any) error {
	var b bytes.Buffer
	b.WriteString(`{"table":`)
	name, _ := json.Marshal(t.Name)
	b.Write(name)
	b.WriteString(`,"row":{`)
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(c.Name)
		b.Write(key)
		b.WriteByte(':')
		v, err := encodeValue(values[i])
		if err != nil {
			return fmt.Errorf("table %s, column %s: %w", t.Name, c.Name, err)
		}
		b.Write(v)
	}
	b.WriteString("}}\n")
	d.counts[t.Name]++
	_, err := d.w.Write(b.Bytes())
	return err
}

// end writes the last line and flushes.
func (d *dumpWriter) end() error {
	if err := d.line(dumpLine{End: &dumpEnd{Rows: d.counts}}); err != nil {
		return err
	}
	return d.w.Flush()
}

func (d *dumpWriter) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = d.w.Write(b)
	return err
}

// dumpReader reads and checks an export: the header when it is made, then
// one row per next. Values come out canonical, as the header's kinds say.
type dumpReader struct {
	dec    *json.Decoder
	header dumpHeader
	tables map[string]*dumpTable
	counts map[string]int64
	record int // lines read, for error messages
}

// ErrBadDump is wrapped by every error about the content of an export file.
var ErrBadDump = errors.New("not a valid switchboard export")

func (d *dumpReader) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrBadDump, d.record, fmt.Sprintf(format, args...))
}

// newDumpReader reads the header of the export in r and checks it.
func newDumpReader(r io.Reader) (*dumpReader, error) {
	d := &dumpReader{dec: json.NewDecoder(r), tables: map[string]*dumpTable{}, counts: map[string]int64{}}
	d.dec.DisallowUnknownFields()
	d.record = 1
	var probe struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	var raw json.RawMessage
	if err := d.dec.Decode(&raw); err != nil {
		if err == io.EOF {
			return nil, d.errorf("the file is empty")
		}
		return nil, d.errorf("the header is not JSON: %v", err)
	}
	if err := json.Unmarshal(raw, &probe); err != nil || probe.Format != DumpFormat {
		return nil, d.errorf("the first line does not say \"format\": %q", DumpFormat)
	}
	if probe.Version != DumpVersion {
		return nil, d.errorf("format version %d is not supported (this switchboard reads version %d)", probe.Version, DumpVersion)
	}
	strict := json.NewDecoder(bytes.NewReader(raw))
	strict.DisallowUnknownFields()
	if err := strict.Decode(&d.header); err != nil {
		return nil, d.errorf("header: %v", err)
	}
	if err := d.checkHeader(); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *dumpReader) checkHeader() error {
	if len(d.header.Migrations) == 0 {
		d.header.Migrations = nil
	}
	if _, err := time.Parse(time.RFC3339Nano, d.header.ExportedAt); err != nil {
		return d.errorf("header: exported_at %q is not an RFC 3339 time", d.header.ExportedAt)
	}
	for i := range d.header.Tables {
		t := &d.header.Tables[i]
		if t.Name == "" || d.tables[t.Name] != nil {
			return d.errorf("header: table %q is unnamed or listed twice", t.Name)
		}
		if len(t.Columns) == 0 {
			return d.errorf("header: table %q has no columns", t.Name)
		}
		cols := map[string]bool{}
		for _, c := range t.Columns {
			if c.Name == "" || cols[c.Name] {
				return d.errorf("header: table %q: column %q is unnamed or listed twice", t.Name, c.Name)
			}
			if !validKind(c.Type) {
				return d.errorf("header: table %q: column %q has unknown type %q", t.Name, c.Name, c.Type)
			}
			cols[c.Name] = true
		}
		if len(t.PrimaryKey) == 0 {
			t.PrimaryKey = nil
		}
		for _, k := range t.PrimaryKey {
			if !cols[k] {
				return d.errorf("header: table %q: primary key column %q is not a column", t.Name, k)
			}
		}
		d.tables[t.Name] = t
	}
	return nil
}

// next returns the next row: its table and its values in the order of the
// table's columns. After the end line, checked against the rows read and
// followed by nothing, it returns io.EOF.
func (d *dumpReader) next() (*dumpTable, []any, error) {
	d.record++
	var l dumpLine
	if err := d.dec.Decode(&l); err != nil {
		if err == io.EOF {
			return nil, nil, d.errorf("the file ends without its end line: it is truncated")
		}
		return nil, nil, d.errorf("%v", err)
	}
	if l.End != nil {
		if l.Table != "" || l.Row != nil {
			return nil, nil, d.errorf("the end line holds a row")
		}
		return nil, nil, d.finish(l.End)
	}
	t := d.tables[l.Table]
	if t == nil {
		return nil, nil, d.errorf("table %q is not in the header", l.Table)
	}
	if len(l.Row) != len(t.Columns) {
		return nil, nil, d.errorf("a row of %s has %d columns, the header lists %d", t.Name, len(l.Row), len(t.Columns))
	}
	values := make([]any, len(t.Columns))
	for i, c := range t.Columns {
		raw, ok := l.Row[c.Name]
		if !ok {
			return nil, nil, d.errorf("a row of %s has no column %s", t.Name, c.Name)
		}
		v, err := decodeValue(c.Type, raw)
		if err != nil {
			return nil, nil, d.errorf("table %s, column %s: %v", t.Name, c.Name, err)
		}
		values[i] = v
	}
	d.counts[t.Name]++
	return t, values, nil
}

func (d *dumpReader) finish(end *dumpEnd) error {
	if len(end.Rows) != len(d.tables) {
		return d.errorf("the end line counts %d tables, the header lists %d", len(end.Rows), len(d.tables))
	}
	for name, want := range end.Rows {
		if d.tables[name] == nil {
			return d.errorf("the end line counts table %q, which is not in the header", name)
		}
		if got := d.counts[name]; got != want {
			return d.errorf("table %s: the end line counts %d rows, the file holds %d: it is damaged", name, want, got)
		}
	}
	var extra json.RawMessage
	if err := d.dec.Decode(&extra); err != io.EOF {
		d.record++
		return d.errorf("something follows the end line")
	}
	return io.EOF
}

// canonicalValue turns a value a driver scanned from a column of kind k
// into the one Go type that stands for the kind: int64, float64, string,
// []byte, bool, time.Time (UTC), or for JSON a string holding valid JSON;
// nil for NULL. A value the kind cannot hold is an error: export refuses
// rather than writes something an import would read differently.
func canonicalValue(k columnKind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch k {
	case kindInteger:
		switch x := v.(type) {
		case int64:
			return x, nil
		case int32:
			return int64(x), nil
		case int:
			return int64(x), nil
		}
	case kindReal:
		switch x := v.(type) {
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%v has no JSON form", x)
			}
			return x, nil
		case float32:
			return float64(x), nil
		case int64:
			return float64(x), nil
		}
	case kindText, kindJSON:
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case []byte:
			s = string(x)
		default:
			return nil, fmt.Errorf("a %s column holds a %T", k, v)
		}
		if !utf8.ValidString(s) {
			return nil, errors.New("the text is not valid UTF-8")
		}
		if k == kindJSON && !json.Valid([]byte(s)) {
			return nil, errors.New("a json column holds text that is not JSON")
		}
		return s, nil
	case kindBlob:
		switch x := v.(type) {
		case []byte:
			return bytes.Clone(x), nil
		case string:
			return []byte(x), nil
		}
	case kindBoolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case int64:
			if x == 0 || x == 1 {
				return x == 1, nil
			}
		}
	case kindTimestamp:
		switch x := v.(type) {
		case time.Time:
			return x.UTC(), nil
		case string:
			if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
				return t.UTC(), nil
			}
		}
	}
	return nil, fmt.Errorf("a %s column holds %T %v", k, v, v)
}

// encodeValue writes a canonical value as JSON.
func encodeValue(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil:
		return json.RawMessage("null"), nil
	case int64:
		return strconv.AppendInt(nil, x, 10), nil
	case []byte:
		return json.Marshal(base64.StdEncoding.EncodeToString(x))
	case time.Time:
		return json.Marshal(x.UTC().Format(time.RFC3339Nano))
	case float64, string, bool:
		return json.Marshal(x)
	}
	return nil, fmt.Errorf("cannot export a %T", v)
}

// decodeValue reads the JSON of a column of kind k into its canonical
// value, refusing JSON of another shape.
func decodeValue(k columnKind, raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return nil, nil
	}
	switch k {
	case kindInteger:
		if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
			return nil, fmt.Errorf("want an integer, got %.40s", raw)
		}
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("want an integer, got %.40s", raw)
		}
		return n, nil
	case kindReal:
		var n json.Number
		if len(raw) == 0 || raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
			return nil, fmt.Errorf("want a number, got %.40s", raw)
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return nil, fmt.Errorf("want a number, got %.40s", raw)
		}
		return f, nil
	case kindBoolean:
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("want true or false, got %.40s", raw)
		}
		return b, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("want a string, got %.40s", raw)
	}
	switch k {
	case kindText:
		return s, nil
	case kindBlob:
		b, err := base64.StdEncoding.Strict().DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("not base64: %v", err)
		}
		return b, nil
	case kindTimestamp:
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, fmt.Errorf("not an RFC 3339 time: %.40q", s)
		}
		return t.UTC(), nil
	case kindJSON:
		if !json.Valid([]byte(s)) {
			return nil, errors.New("the value of a json column is not JSON")
		}
		return s, nil
	}
	return nil, fmt.Errorf("unknown type %q", k)
}

// convertValue turns a canonical value of kind from (the file's column)
// into an argument for a column of kind to (the database's), where the
// engines differ in how they keep the same data. It refuses conversions
// that could change the data.
func convertValue(v any, from, to columnKind) (any, error) {
	if v == nil || from == to {
		return v, nil
	}
	switch x := v.(type) {
	case int64:
		switch to {
		case kindBoolean:
			if x == 0 || x == 1 {
				return x == 1, nil
			}
		case kindReal:
			return float64(x), nil
		}
	case bool:
		if to == kindInteger {
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		}
	case time.Time:
		if to == kindText {
			return x.Format(time.RFC3339Nano), nil
		}
	case string:
		switch {
		case from == kindJSON && to == kindText:
			return x, nil
		case from == kindText && to == kindJSON && json.Valid([]byte(x)):
			return x, nil
		case from == kindText && to == kindTimestamp:
			if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
				return t.UTC(), nil
			}
		}
	}
	return nil, fmt.Errorf("a %s value (%.40v) does not fit a %s column", from, v, to)
}

// convertible reports whether some values of kind from can go into a
// column of kind to; convertValue then checks each value.
func convertible(from, to columnKind) bool {
	if from == to {
		return true
	}
	switch from {
	case kindInteger:
		return to == kindBoolean || to == kindReal
	case kindBoolean:
		return to == kindInteger
	case kindTimestamp:
		return to == kindText
	case kindJSON:
		return to == kindText
	case kindText:
		return to == kindJSON || to == kindTimestamp
	}
	return false
}
