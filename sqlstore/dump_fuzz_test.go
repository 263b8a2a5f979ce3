package sqlstore

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
	"time"
)

// dumpSeed is a valid export with a column of every kind.
const dumpSeed = `{"format":"switchboard-export","version":1,"exported_at":"2026-01-02T03:04:05.123456789Z","engine":"sqlite","migrations":["0001_init.sql"],"tables":[{"name":"a","columns":[{"name":"i","type":"integer"},{"name":"r","type":"real"},{"name":"t","type":"text"},{"name":"b","type":"blob"},{"name":"o","type":"boolean"},{"name":"ts","type":"timestamp"},{"name":"j","type":"json"}],"primary_key":["i"]},{"name":"z","columns":[{"name":"id","type":"text"}]}]}
{"table":"a","row":{"i":-9223372036854775808,"r":1.5e-7,"t":"h\u00e9llo \"x\"\n","b":"AAEC/w==","o":true,"ts":"2026-01-02T03:04:05.000000001Z","j":"{\"k\":[1,2]}"}}
{"table":"a","row":{"i":9223372036854775807,"r":null,"t":"","b":"","o":false,"ts":null,"j":"null"}}
{"table":"z","row":{"id":"x"}}
{"end":{"rows":{"a":2,"z":1}}}
`

// dumpRow is one row read back.
type dumpRow struct {
	table  string
	values []any
}

// readDump reads a whole export without a database.
func readDump(r io.Reader) (*dumpHeader, []dumpRow, error) {
	d, err := newDumpReader(r)
	if err != nil {
		return nil, nil, err
	}
	var rows []dumpRow
	for {
		t, values, err := d.next()
		if err == io.EOF {
			return &d.header, rows, nil
		}
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, dumpRow{t.Name, values})
	}
}

// writeDump writes what readDump read.
func writeDump(tb testing.TB, h *dumpHeader, rows []dumpRow) []byte {
	tb.Helper()
	var b bytes.Buffer
	w := newDumpWriter(&b)
	if err := w.header(h); err != nil {
		tb.Fatal(err)
	}
	byName := map[string]*dumpTable{}
	for i := range h.Tables {
		byName[h.Tables[i].Name] = &h.Tables[i]
	}
	for _, r := range rows {
		if err := w.row(byName[r.table], r.values); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.end(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

func TestDumpSeedReads(t *testing.T) {
	h, rows, err := readDump(bytes.NewReader([]byte(dumpSeed)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || h.Tables[0].Name != "a" {
		t.Fatalf("read %d rows", len(rows))
	}
	want := []any{int64(-9223372036854775808), 1.5e-7, "héllo \"x\"\n", []byte{0, 1, 2, 255}, true,
		time.Date(2026, 1, 2, 3, 4, 5, 1, time.UTC), `{"k":[1,2]}`}
	if !reflect.DeepEqual(rows[0].values, want) {
		t.Fatalf("row 1 = %#v\nwant %#v", rows[0].values, want)
	}
	if got := writeDump(t, h, rows); string(got) == "" {
		t.Fatal("nothing written")
	}
}

// FuzzDumpReader: any input is either refused with ErrBadDump, or read
// into rows that, written back, read again the same.
func FuzzDumpReader(f *testing.F) {
	f.Add([]byte(dumpSeed))
	f.Add([]byte(""))
	f.Add([]byte(`{"format":"switchboard-export","version":2}`))
	f.Add([]byte(dumpSeed[:len(dumpSeed)/2]))
	f.Add(bytes.Replace([]byte(dumpSeed), []byte(`"i":-9223372036854775808`), []byte(`"i":-9223372036854775809`), 1))
	f.Add(bytes.Replace([]byte(dumpSeed), []byte(`"b":"AAEC/w=="`), []byte(`"b":"AAEC/w="`), 1))
	f.Add(bytes.Replace([]byte(dumpSeed), []byte(`"z":1`), []byte(`"z":2`), 1))
	f.Add([]byte(dumpSeed + "{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, rows, err := readDump(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrBadDump) {
				t.Fatalf("error without ErrBadDump: %v", err)
			}
			return
		}
		again := writeDump(t, h, rows)
		h2, rows2, err := readDump(bytes.NewReader(again))
		if err != nil {
			t.Fatalf("an accepted file, written back, is refused: %v\n%s", err, again)
		}
		if !reflect.DeepEqual(rows, rows2) || !reflect.DeepEqual(h, h2) {
			t.Fatalf("written back, the file reads differently:\n%s", again)
		}
	})
}

func TestConvertValue(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	ok := []struct {
		v        any
		from, to columnKind
		want     any
	}{
		{int64(1), kindInteger, kindBoolean, true},
		{int64(0), kindInteger, kindBoolean, false},
		{true, kindBoolean, kindInteger, int64(1)},
		{int64(3), kindInteger, kindReal, 3.0},
		{ts, kindTimestamp, kindText, "2026-01-02T03:04:05.000000006Z"},
		{"2026-01-02T03:04:05.000000006Z", kindText, kindTimestamp, ts},
		{`{"a":1}`, kindJSON, kindText, `{"a":1}`},
		{`[1]`, kindText, kindJSON, `[1]`},
		{nil, kindText, kindText, nil},
	}
	for _, c := range ok {
		got, err := convertValue(c.v, c.from, c.to)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("convert %v %s→%s = %v, %v; want %v", c.v, c.from, c.to, got, err, c.want)
		}
		if !convertible(c.from, c.to) {
			t.Errorf("%s→%s converts but is not convertible", c.from, c.to)
		}
	}
	bad := []struct {
		v        any
		from, to columnKind
	}{
		{int64(2), kindInteger, kindBoolean},
		{"x", kindText, kindTimestamp},
		{"not json", kindText, kindJSON},
		{[]byte{1}, kindBlob, kindText},
		{1.5, kindReal, kindInteger},
	}
	for _, c := range bad {
		if got, err := convertValue(c.v, c.from, c.to); err == nil {
			t.Errorf("convert %v %s→%s = %v, want an error", c.v, c.from, c.to, got)
		}
	}
}

func TestSortByReferences(t *testing.T) {
	tables := []*table{
		{name: "a", refs: []foreignKey{{col: "c_id", refTable: "c", refCol: "id"}}},
		{name: "b"},
		{name: "c", refs: []foreignKey{{col: "parent", refTable: "c", refCol: "id"}}}, // itself: ignored
		{name: "d", refs: []foreignKey{{col: "a_id", refTable: "a", refCol: "id"}}},
	}
	var got []string
	for _, tb := range sortByReferences(tables) {
		got = append(got, tb.name)
	}
	if want := []string{"b", "c", "a", "d"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}
