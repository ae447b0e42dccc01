// Room: tests of which attached browsers share this machine's files. No
// locks.

package browserpool

import "testing"

func TestOnlyALoopbackHostSharesThisMachinesFiles(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "localhost": true, "LOCALHOST.": true, "app.localhost": true, "::ffff:127.0.0.1": true,
		"host.docker.internal": false, "10.0.0.5": false, "192.168.1.20": false, "chrome.example.com": false, "::": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}
