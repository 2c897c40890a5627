package s3test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
)

// S3Client returns an aws-sdk-go-v2 client for the server: static root
// credentials, path-style addressing (the bucket cannot be a subdomain of
// 127.0.0.1), and the SDK's default retries.
func (s *Server) S3Client() *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(s.Endpoint),
		Region:       s.Region,
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
	})
}

// OpenBucket opens the server's bucket through gocloud.dev/blob, the way
// lakesql's storage layer reaches S3, and closes it when the test ends.
func (s *Server) OpenBucket(tb testing.TB) *blob.Bucket {
	tb.Helper()
	b, err := s3blob.OpenBucket(context.Background(), s.S3Client(), s.Bucket, nil)
	if err != nil {
		tb.Fatalf("open bucket %s: %v", s.Bucket, err)
	}
	tb.Cleanup(func() { b.Close() })
	return b
}

// createBucket makes the bucket through the S3 API rather than as a
// directory, so that versitygw records its owner and ACL as it would for
// any client. A bucket left by an earlier start on the same Dir is kept.
func (s *Server) createBucket() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := s.S3Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(s.Bucket)})
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return fmt.Errorf("create bucket %s: %w", s.Bucket, err)
	}
	return nil
}
