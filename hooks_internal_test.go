package browserpool

import (
	"reflect"
	"testing"
)

func TestHooksWithAnyOneFuncSetAreNotNone(t *testing.T) {
	if !(Hooks{}).none() {
		t.Error("the zero Hooks: none() = false, want true")
	}
	typ := reflect.TypeFor[Hooks]()
	for i := range typ.NumField() {
		var h Hooks
		f := reflect.ValueOf(&h).Elem().Field(i)
		f.Set(reflect.MakeFunc(f.Type(), func([]reflect.Value) []reflect.Value { return nil }))
		if h.none() {
			t.Errorf("Hooks with only %s set: none() = true; add the field to none, or its events are never delivered", typ.Field(i).Name)
		}
	}
}
