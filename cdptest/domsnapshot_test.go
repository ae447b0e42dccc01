package cdptest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool/cdptest"
)

func TestAFakeFileInputReadsAsChromiumsNoFileChosenThenTheChosenFiles(t *testing.T) {
	photos := cdptest.FileInput("Photos")
	photos.Multiple = true
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "Profile",
		cdptest.FileInput("Avatar"), // the page's first element, as the document is its root's
		photos,
		cdptest.TextBox("Name"),
	))
	dir := t.TempDir()
	var files []string
	for _, name := range []string{"avatar.png", "a.jpg", "b.jpg"} {
		files = append(files, filepath.Join(dir, name))
		if err := os.WriteFile(files[len(files)-1], []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	snap := mustSnap(t, tab)
	want := `- button "Avatar" @e1 value="No file chosen" type=file
- button "Photos" @e2 value="No file chosen" type=file
- textbox "Name" @e3
`
	if diff := cmp.Diff(want, snap.Text); diff != "" {
		t.Errorf("the snapshot before an upload (-want +got):\n%s", diff)
	}

	ctx := testCtx(t)
	if err := tab.Upload(ctx, snap.Find("button", "Avatar"), files[0]); err != nil {
		t.Fatal(err)
	}
	if err := tab.Upload(ctx, snap.Find("button", "Photos"), files[1:]...); err != nil {
		t.Fatal(err)
	}
	want = `- button "Avatar" @e1 value="avatar.png" type=file
- button "Photos" @e2 value="2 files" type=file
- textbox "Name" @e3
`
	if diff := cmp.Diff(want, mustSnap(t, tab).Text); diff != "" {
		t.Errorf("the snapshot after uploading avatar.png and two photos (-want +got):\n%s", diff)
	}
}
