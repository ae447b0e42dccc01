// Room: a table's rows and cells: every cell holds its column, and a
// row of text only is one line. No locks.

package axtext

import (
	"cmp"
	"strings"
)

// cellRoles are a table's cells: printed even when empty (cell ""), so
// that every row has a line per column and each value stays under its
// header.
var cellRoles = set("cell", "gridcell", "rowheader", "columnheader")

// rowCells summarizes the row n on its line when its cells hold text only
// (no ref, no structure): headers=["Name", "Email"] for a row of column
// headers, else cells=["Ann", "", "555-1"], an empty cell as "", so that
// each value stays under its header. It returns "" for a row that holds
// anything else: its cells print as lines under it.
func (d *Doc[T]) rowCells(n *Node) string {
	var cells []string
	headers := true
	for _, id := range n.ChildIDs {
		c := d.Nodes[id]
		if c == nil || c.Ignored {
			if c != nil && len(c.ChildIDs) > 0 {
				return "" // cells wrapped in something: printed as they are
			}
			continue
		}
		role := String(c.Role)
		if !cellRoles[role] || d.target(c) || len(States(role, c.Props)) > 0 {
			return ""
		}
		var text strings.Builder
		if !d.onlyText(c, &text, 0) {
			return ""
		}
		name := cmp.Or(Squash(String(c.Name)), Squash(text.String()))
		cells = append(cells, Quote(Cut(name, NameLimit)))
		headers = headers && role == "columnheader"
	}
	if len(cells) == 0 {
		return ""
	}
	if headers {
		return "headers=[" + strings.Join(cells, ", ") + "]"
	}
	return "cells=[" + strings.Join(cells, ", ") + "]"
}

// cellName settles the name of the cell printed at line at, its lines
// under it walked: a cell whose name only repeats what the lines right
// under it say (its link's name, its field's value) prints as cell with
// no name, and an empty cell as cell "", so that it still holds its
// column.
func (w *Walker[T]) cellName(at int) {
	cell := &w.Lines[at]
	var under []*Line[T]
	for i := at + 1; i < len(w.Lines); i++ {
		if w.Lines[i].Depth == cell.Depth+1 {
			under = append(under, &w.Lines[i])
		}
	}
	if len(under) == 0 {
		cell.Quoted = cell.Name == ""
		return
	}
	if cell.Name == "" {
		return
	}
	if len(under) == 1 && (cell.Name == under[0].Name || cell.Name == under[0].Value) {
		cell.Name = ""
		return
	}
	said := make([]string, len(under))
	for i, l := range under {
		said[i] = cmp.Or(l.Name, l.Value)
	}
	if cell.Name == Cut(strings.Join(said, " "), NameLimit) {
		cell.Name = ""
	}
}
