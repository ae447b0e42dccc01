package benchfloor

import (
	"testing"

	"github.com/browserpool/browserpool/internal/leakcheck"
)

// TestMain fails the run if a goroutine started by a test outlives it.
func TestMain(m *testing.M) {
	leakcheck.Main(m, leakcheck.MainOptions{})
}

func TestTheRunningExecutablesResidentSectionsAreFoundAndFitInItsRSS(t *testing.T) {
	code, err := ResidentCodeKiB()
	if err != nil {
		t.Fatal(err)
	}
	rss, anon, err := ResidentKiB()
	if err != nil {
		t.Fatal(err)
	}
	// This code is running and its function tables were read to start
	// this test's goroutine: .text and .gopclntab have resident pages.
	if code.Text == 0 || code.Pclntab == 0 {
		t.Errorf("resident .text %d KiB, .gopclntab %d KiB: want both above 0 in a running test", code.Text, code.Pclntab)
	}
	if sum := code.Text + code.Pclntab + code.Rodata + code.Other; sum > rss-anon {
		t.Errorf("the executable's resident sections sum to %d KiB, more than the file-backed RSS (%d KiB)", sum, rss-anon)
	}
}
