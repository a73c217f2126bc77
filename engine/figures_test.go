package engine

import (
	"reflect"
	"testing"
)

// TestFiguresRoundTrip: a reply's figures survive the checkpoint form
// field for field, but for the per-token list and the memory sample,
// which checkpoints do not keep. Every exported field gets a distinct
// value, so a metric added to TurnMetrics and not to checkpoints.Figures
// fails here (a stopped reply's figures would be lost on a load).
func TestFiguresRoundTrip(t *testing.T) {
	var m TurnMetrics
	n := 0
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if !v.Type().Field(i).IsExported() {
				continue
			}
			n++
			switch f.Kind() {
			case reflect.Int:
				f.SetInt(int64(n))
			case reflect.Float64:
				f.SetFloat(float64(n) + 0.5)
			case reflect.Bool:
				f.SetBool(true)
			case reflect.String:
				f.SetString("v" + string(rune('a'+n%26)))
			case reflect.Struct:
				fill(f)
			}
		}
	}
	fill(reflect.ValueOf(&m).Elem())
	m.PerTokenMillis, m.Memory = nil, Memory{}
	back := fromFigures(toFigures(&m))
	back.PerTokenMillis = nil
	if !reflect.DeepEqual(*back, m) {
		t.Fatalf("figures after a checkpoint:\n%+v\nwant\n%+v", *back, m)
	}
}
