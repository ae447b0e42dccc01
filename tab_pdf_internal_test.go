// Room: tests of PDFOptions.PageRanges' check. No locks.

package browserpool

import "testing"

func TestPageRangesAreCheckedAsChromiumReadsThem(t *testing.T) {
	for r, ok := range map[string]bool{
		"": true, "1": true, "1-3, 5": true, "3-": true, "-2": true, " 2 - 4 ,7": true,
		"0": false, "5-3": false, "a": false, "1-x": false, "1,,2": false, "1-2-3": false,
	} {
		if why := checkPageRanges(r); (why == "") != ok {
			t.Errorf("checkPageRanges(%q) = %q; want ok=%v", r, why, ok)
		}
	}
}
