// Package stackroom grows a new goroutine's stack once, at its first frame,
// to the size its work will reach anyway.
//
// A goroutine starts with a 2 KiB stack, and the runtime copies it to a
// stack twice the size each time a call does not fit. Every copy walks all
// the frames on the stack and reads each one's function tables (.gopclntab:
// the frame size, the stack map). A copy deep in encoding/json or net thus
// brings those packages' tables into memory, 64 KiB at a time, for a page
// of stack. Growing the stack at the goroutine's first frame costs one
// copy of one frame, and the deep calls later find the room they need.
// It saves nothing once a GC has shrunk the stack of a goroutine that
// waits with little of it in use; the next deep call grows it as before.
// No locks.
package stackroom

// To8K makes room for 5 KiB of frames below the caller's: a goroutine's
// first frame calling it gets an 8 KiB stack in one copy.
//
//go:noinline
func To8K() {
	var pad [5 << 10]byte
	keep(pad[:])
}

// To16K makes room for 10 KiB of frames below the caller's: a goroutine's
// first frame calling it gets a 16 KiB stack in one copy.
//
//go:noinline
func To16K() {
	var pad [10 << 10]byte
	keep(pad[:])
}

// keep makes pad a live local that the compiler cannot drop.
//
//go:noinline
func keep([]byte) {}
