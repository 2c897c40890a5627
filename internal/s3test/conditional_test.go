package s3test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
)

// TestIfNotExistCheckedAtCommit pins down where versitygw decides an
// If-None-Match: * put: not only when the request arrives (a writer that
// got past that early check must still lose if another writer published
// while it was sending its body), but again at commit, under its publish
// lock. Random races cannot show this, as most losers fail the early check.
//
// Writer A sends its headers and most of a large body, then stalls; B
// creates the key; then A finishes, and must get 412.
func TestIfNotExistCheckedAtCommit(t *testing.T) {
	// A's first part must outgrow every buffer between us and versitygw's
	// handler (loopback socket buffers autotune up to tens of MiB), so
	// that its having been written proves the handler runs A's upload.
	const first, rest = 64 << 20, 1 << 20
	ctx := context.Background()
	s := shared
	key := prefix(t) + "/00000000000000000001.json"

	pre, err := s3.NewPresignClient(s.S3Client()).PresignPutObject(ctx, &s3.PutObjectInput{
		Bucket:      aws.String(s.Bucket),
		Key:         aws.String(key),
		IfNoneMatch: aws.String("*"),
	})
	if err != nil {
		t.Fatalf("presign: %v", err)
	}
	body, feed := io.Pipe()
	defer feed.Close() // on failure, ends A's request
	req, err := http.NewRequestWithContext(ctx, pre.Method, pre.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = pre.SignedHeader.Clone()
	req.ContentLength = first + rest
	type result struct {
		status int
		err    error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- result{err: err}
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		done <- result{status: resp.StatusCode}
	}()
	chunk := make([]byte, 1<<20)
	send := func(n int) {
		for ; n > 0; n -= len(chunk) {
			if _, err := feed.Write(chunk); err != nil {
				t.Fatalf("send A's body: %v", err)
			}
		}
	}
	send(first)
	select {
	case r := <-done:
		t.Fatalf("A answered before its body was all sent: status %d, %v", r.status, r.err)
	default:
	}

	b := s.OpenBucket(t)
	if err := b.WriteAll(ctx, key, []byte("B"), &blob.WriterOptions{IfNotExist: true}); err != nil {
		t.Fatalf("B's create while A is mid-body: %v", err)
	}

	send(rest)
	feed.Close()
	select {
	case r := <-done:
		if r.err != nil || r.status != http.StatusPreconditionFailed {
			t.Fatalf("A after B created the key: status %d, %v; want 412", r.status, r.err)
		}
	case <-time.After(time.Minute):
		t.Fatal("A got no answer")
	}
	got, err := b.ReadAll(ctx, key)
	if err != nil || string(got) != "B" {
		t.Fatalf("object = %d bytes %.10q, %v; want B's", len(got), got, err)
	}
}
