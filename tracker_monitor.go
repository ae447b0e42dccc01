// Room: the tracker's monitoring view: snapshots and the admin handler. It
// copies the tracker's tables under Tracker.mu and reads /proc and the
// browsers unlocked, through the seam (pool_seam.go).

package browserpool

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/browserpool/browserpool/internal/proc"
)

// TrackedSession is a monitoring snapshot of one tracked session.
type TrackedSession struct {
	SessionID string        `json:"session_id"`        // empty while the session is still opening
	Name      string        `json:"name"`              // the session's name in its workflow
	Workflow  string        `json:"workflow"`          // the workflow that opened it
	PID       int           `json:"pid"`               // the browser's pid; 0 for a remote or in-memory browser
	Age       time.Duration `json:"age_ns"`            // since the tracker began opening it
	Idle      time.Duration `json:"idle_ns"`           // since a call on it last started or ended
	InFlight  int           `json:"in_flight"`         // calls under way now (actions and raw CDP calls)
	Tabs      int           `json:"tabs"`              // open tabs; 0 unless live, or when the browser did not answer within a second
	CPU       time.Duration `json:"cpu_ns"`            // user+system time of the browser's process tree
	RSS       uint64        `json:"rss_bytes"`         // resident set size, summed over the tree
	PSS       uint64        `json:"pss_bytes"`         // proportional set size, summed over the tree
	Processes int           `json:"processes"`         // how many processes: the browser and its descendants
	State     string        `json:"state"`             // opening, live, closing, closed
	Holders   []string      `json:"holders,omitempty"` // identities holding it (Tracker.OpenFor)
	// Fleet and Endpoint say where a leased browser lives (SessionInfo.Fleet
	// and Endpoint: the fleet kind and its URL without credentials or
	// token); both are empty for a local browser.
	Fleet    string `json:"fleet,omitempty"`    // the fleet kind
	Endpoint string `json:"endpoint,omitempty"` // the fleet's URL
}

// Sessions returns a snapshot of every tracked session, ordered by workflow
// then name. CPU and memory are read from /proc over each browser's process
// tree; the tab count asks each browser, bounded by ctx.
func (tr *Tracker) Sessions(ctx context.Context) []TrackedSession {
	// seen is an entry as copied under Tracker.mu.
	type seen struct {
		workflow, name string
		created        time.Time
		s              *Session
		holders        []string
	}
	tr.mu.Lock()
	es := make([]seen, 0, len(tr.entries))
	for _, e := range tr.entries {
		var hs []string
		if e.holders.len() > 0 {
			hs = e.holders.keys()
		}
		es = append(es, seen{workflow: e.workflow, name: e.name, created: e.created, s: e.s, holders: hs})
	}
	tr.mu.Unlock()
	slices.SortFunc(es, func(a, b seen) int {
		if c := strings.Compare(a.workflow, b.workflow); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	now := time.Now()
	out := make([]TrackedSession, 0, len(es))
	var procs []proc.Info // every process, listed once for every browser's tree
	listed := false
	for _, e := range es {
		ts := TrackedSession{Name: e.name, Workflow: e.workflow, Age: now.Sub(e.created), State: "opening", Holders: e.holders}
		if s := e.s; s != nil {
			info := s.Info()
			ts.SessionID, ts.PID, ts.InFlight, ts.State = s.ID(), info.PID, info.InFlight, string(info.State)
			ts.Fleet, ts.Endpoint = info.Fleet, info.Endpoint
			ts.Idle = now.Sub(info.LastUsed)
			if info.State == StateLive {
				tctx, cancel := context.WithTimeout(ctx, time.Second)
				if n, err := s.tabCount(tctx); err == nil {
					ts.Tabs = n
				}
				cancel()
			}
			if info.PID > 0 {
				if !listed {
					procs, _ = proc.List(nil)
					listed = true
				}
				if pids := proc.TreeIn(procs, info.PID); pids != nil {
					ts.Processes = len(pids)
					ts.CPU, ts.RSS, ts.PSS = proc.Usage(pids)
				}
			}
		}
		out = append(out, ts)
	}
	return out
}

// MonitorSnapshot is what Tracker.Handler serves.
type MonitorSnapshot struct {
	Time     time.Time        `json:"time"`     // when it was taken
	Sessions []TrackedSession `json:"sessions"` // every tracked session, opening ones included
	Stats    Stats            `json:"stats"`    // the pool's counters (Pool.Stats)
	Orphans  []Orphan         `json:"orphans"`  // what Pool.Orphans lists under the pool's root
	// Limits are the tracker's (TrackerConfig.PerWorkflow and Global).
	Limits struct {
		PerWorkflow int `json:"per_workflow"`
		Global      int `json:"global"`
	} `json:"limits"`
}

// Snapshot returns the sessions, the pool's stats and the orphans.
func (tr *Tracker) Snapshot(ctx context.Context) MonitorSnapshot {
	var m MonitorSnapshot
	m.Time = time.Now()
	m.Sessions = tr.Sessions(ctx)
	m.Stats = tr.pool.Stats()
	m.Orphans, _ = tr.pool.Orphans()
	if m.Orphans == nil {
		m.Orphans = []Orphan{}
	}
	m.Limits.PerWorkflow, m.Limits.Global = tr.cfg.PerWorkflow, tr.cfg.Global
	return m
}

// Handler serves the tracker for a host's admin page:
//
//	GET  /          the MonitorSnapshot as JSON
//	POST /close     close one session: form or query values workflow and name
//	POST /close-all close every tracked session
//
// Mount it under a prefix with http.StripPrefix, for example
//
//	mux.Handle("/admin/browsers/", http.StripPrefix("/admin/browsers", tr.Handler()))
//
// It has no authentication or CSRF protection of its own: put it behind
// the host's admin auth, or bind it to 127.0.0.1 only.
func (tr *Tracker) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, tr.Snapshot(r.Context()))
	})
	mux.HandleFunc("POST /close", func(w http.ResponseWriter, r *http.Request) {
		wf, name := r.FormValue("workflow"), r.FormValue("name")
		if wf == "" || name == "" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "give workflow and name of the session to close"})
			return
		}
		if !tr.has(wf, name) {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "workflow " + wf + " has no session " + name})
			return
		}
		if err := tr.CloseSession(r.Context(), wf, name); err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"closed": wf + "/" + name})
	})
	mux.HandleFunc("POST /close-all", func(w http.ResponseWriter, r *http.Request) {
		if err := tr.CloseAll(r.Context()); err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"closed": "all"})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func (tr *Tracker) has(workflow, name string) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.entries[trackKey{workflow, name}] != nil
}
