// Room: tests of the pipe framing. No locks.

package cdpmux

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// chunky reads its data in chunks of random sizes (1 byte to 1 MiB), as a
// pipe may deliver them.
type chunky struct {
	data []byte
	rnd  *rand.Rand
}

func (c *chunky) Read(b []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(b), len(c.data), 1+c.rnd.IntN(1<<20))
	if c.rnd.IntN(4) == 0 {
		n = min(n, 1+c.rnd.IntN(100))
	}
	copy(b, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func (c *chunky) Close() error { return nil }

type nopWriter struct{}

func (nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (nopWriter) Close() error                { return nil }

func pipeOf(data []byte, seed uint64) *PipeTransport {
	return NewPipeTransport(&chunky{data: data, rnd: rand.New(rand.NewPCG(seed, 1))}, nopWriter{})
}

func TestThePipeReturnsEveryMessageWhateverTheReadSizes(t *testing.T) {
	var want [][]byte
	var stream []byte
	for i, size := range []int{0, 1, 100, pipeBuf - 1, pipeBuf, pipeBuf + 1, 3, 200000, 2 << 20, 5, 2 << 20, 7, 300 << 10, 1, pipeBuf * 3} {
		m := bytes.Repeat([]byte{byte('a' + i)}, size)
		want = append(want, m)
		stream = append(append(stream, m...), 0)
	}
	for seed := range uint64(20) {
		p := pipeOf(stream, seed)
		var got [][]byte
		for {
			m, err := p.ReadMessage()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("seed %d: ReadMessage after %d messages: %v", seed, len(got), err)
			}
			got = append(got, m)
		}
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d messages, want %d", seed, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(want[i], got[i]) {
				t.Fatalf("seed %d: message %d: %d bytes starting %.20q, want %d bytes starting %.20q", seed, i, len(got[i]), got[i], len(want[i]), want[i])
			}
		}
	}
}

func TestThePipeReportsAMessageCutShortAsUnexpectedEOF(t *testing.T) {
	for _, size := range []int{10, pipeBuf + 10, 1 << 20} {
		p := pipeOf(append([]byte("{}\x00"), strings.Repeat("x", size)...), 1)
		var errs []error
		for range 2 {
			_, err := p.ReadMessage()
			errs = append(errs, err)
		}
		if diff := cmp.Diff([]error{nil, io.ErrUnexpectedEOF}, errs, cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) && errors.Is(b, a) || a == b })); diff != "" {
			t.Errorf("a %d-byte message cut short (-want +got):\n%s", size, diff)
		}
	}
}

// A 2 MB reply costs one allocation (its own slice, sized by the last big
// one), not one per 64 KiB read.
func TestATwoMegabyteMessageIsReadIntoOneSlice(t *testing.T) {
	msg := append([]byte(`{"id":1,"result":{"nodes":[`+strings.Repeat(`{"nodeId":"1"},`, 140000)), "{}]}}\x00"...)
	stream := bytes.Repeat(msg, 6)
	p := NewPipeTransport(io.NopCloser(bytes.NewReader(stream)), nopWriter{})
	if _, err := p.ReadMessage(); err != nil { // sets the size hint
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(4, func() {
		m, err := p.ReadMessage()
		if err != nil || len(m) != len(msg)-1 {
			t.Fatalf("ReadMessage: %d bytes, %v", len(m), err)
		}
	})
	if allocs > 1 {
		t.Errorf("reading a %d-byte message took %v allocations, want 1", len(msg), allocs)
	}
}

// BenchmarkPipeRead2MB reads 2 MB replies with the pipe framing, next to
// what a bufio.Reader's ReadBytes (the framing before issue 14) costs.
func BenchmarkPipeRead2MB(b *testing.B) {
	msg := append([]byte(`{"id":1,"result":{"nodes":[`+strings.Repeat(`{"nodeId":"1"},`, 140000)), "{}]}}\x00"...)
	b.Run("pipe-transport", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			p := NewPipeTransport(&chunky{data: bytes.Repeat(msg, 2), rnd: rand.New(rand.NewPCG(1, 1))}, nopWriter{})
			p.ReadMessage() // the size hint, as from an earlier big reply
			b.StartTimer()
			if _, err := p.ReadMessage(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bufio-readbytes", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			r := bufio.NewReaderSize(&chunky{data: bytes.Repeat(msg, 2), rnd: rand.New(rand.NewPCG(1, 1))}, pipeBuf)
			r.ReadBytes(0)
			b.StartTimer()
			if _, err := r.ReadBytes(0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestAnInterruptedReadLosesNothingOfTheMessageItHadBegun interrupts a
// read (SetReadDeadline, as a mux's caller does when its ctx ends) in the
// middle of a small message and of one that outgrew the read buffer: the
// next ReadMessage returns each whole.
func TestAnInterruptedReadLosesNothingOfTheMessageItHadBegun(t *testing.T) {
	for _, size := range []int{100, 5*pipeBuf + 17} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			p := NewPipeTransport(r, nopWriter{})
			defer p.Close()
			msg := bytes.Repeat([]byte("x"), size)
			half := size / 2
			got := make(chan []byte, 1)
			errc := make(chan error, 1)
			go func() {
				b, err := p.ReadMessage()
				got <- b
				errc <- err
			}()
			// A pipe holds 64 KiB at most: once this write returns, the
			// reader has taken all but that much of the first half (for
			// the big message, more than its read buffer holds: readBig has it).
			if _, err := w.Write(msg[:half]); err != nil {
				t.Fatal(err)
			}
			if err := p.SetReadDeadline(time.Unix(1, 0)); err != nil {
				t.Fatalf("SetReadDeadline on a pipe: %v", err)
			}
			if b, err := <-got, <-errc; !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("interrupted ReadMessage = %d bytes, %v; want os.ErrDeadlineExceeded", len(b), err)
			}
			if err := p.SetReadDeadline(time.Time{}); err != nil {
				t.Fatal(err)
			}
			go func() {
				b, err := p.ReadMessage()
				got <- b
				errc <- err
			}()
			if _, err := w.Write(append(append(msg[half:], 0), `{"next":1}`+"\x00"...)); err != nil {
				t.Fatal(err)
			}
			b, err := <-got, <-errc
			if err != nil || !bytes.Equal(b, msg) {
				t.Fatalf("ReadMessage after the interrupt = %d bytes, %v; want the whole %d-byte message", len(b), err, size)
			}
			if b, err := p.ReadMessage(); err != nil || string(b) != `{"next":1}` {
				t.Errorf("the message after it = %q, %v; want {\"next\":1}", b, err)
			}
		})
	}
}
