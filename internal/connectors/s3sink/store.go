package s3sink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// store is the bucket, through the AWS SDK. Every object it writes appears
// whole or not at all: a single PUT, or a multipart upload that is visible
// only once completed (an upload that fails is aborted).
type store struct {
	client   *s3.Client
	bucket   string
	partSize int64
	objects  objectOptions
}

func newStore(ctx context.Context, c *config) (*store, error) {
	opts := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithRegion(c.region),
		awsconfig.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = c.partRetries + 1
				o.MaxBackoff = c.retryBackoff
			})
		}),
		// Stores that speak S3 but not its newer checksum trailers
		// (MinIO before 2023, Ceph, gofakes3) need checksums only when an
		// API requires them.
		awsconfig.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		awsconfig.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	}
	if c.accessKeyID != "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(c.accessKeyID, c.secretKey, "")))
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("s3sink: AWS config: %w", err)
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if c.storeURL != "" {
			o.BaseEndpoint = aws.String(c.storeURL)
		}
		o.UsePathStyle = c.pathStyle
	})
	return &store{client: client, bucket: c.bucket, partSize: c.partSize, objects: c.objects}, nil
}

// put writes an object whole, with user metadata and tags (URL-encoded,
// empty for none), encrypted and with the ACL s.objects says.
func (s *store) put(ctx context.Context, key string, body []byte, meta map[string]string, tags string) error {
	if int64(len(body)) < s.partSize {
		in := &s3.PutObjectInput{
			Bucket: &s.bucket, Key: &key, Body: bytes.NewReader(body),
			ContentLength: aws.Int64(int64(len(body))), Metadata: meta,
		}
		o := s.objects
		in.ServerSideEncryption, in.SSEKMSKeyId, in.ACL = o.sse, o.kmsKeyID, o.acl
		in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = o.customerAlgorithm, o.customerKey, o.customerKeyMD5
		in.Tagging = optional(tags)
		if _, err := s.client.PutObject(ctx, in); err != nil {
			return fmt.Errorf("s3sink: put %s: %w", key, err)
		}
		return nil
	}
	return s.putMultipart(ctx, key, body, meta, tags)
}

func (s *store) putMultipart(ctx context.Context, key string, body []byte, meta map[string]string, tags string) error {
	in := &s3.CreateMultipartUploadInput{Bucket: &s.bucket, Key: &key, Metadata: meta}
	o := s.objects
	in.ServerSideEncryption, in.SSEKMSKeyId, in.ACL = o.sse, o.kmsKeyID, o.acl
	in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = o.customerAlgorithm, o.customerKey, o.customerKeyMD5
	in.Tagging = optional(tags)
	created, err := s.client.CreateMultipartUpload(ctx, in)
	if err != nil {
		return fmt.Errorf("s3sink: start multipart upload of %s: %w", key, err)
	}
	parts, err := s.uploadParts(ctx, key, created.UploadId, body)
	if err == nil {
		_, err = s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
			Bucket: &s.bucket, Key: &key, UploadId: created.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
		})
	}
	if err != nil {
		s.abort(key, created.UploadId)
		return fmt.Errorf("s3sink: multipart upload of %s: %w", key, err)
	}
	return nil
}

func (s *store) uploadParts(ctx context.Context, key string, uploadID *string, body []byte) ([]types.CompletedPart, error) {
	var parts []types.CompletedPart
	for n, off := int32(1), int64(0); off < int64(len(body)); n, off = n+1, off+s.partSize {
		end := min(off+s.partSize, int64(len(body)))
		// The last part takes the remainder when it would be under S3's
		// minimum, so every part but the last is at least partSize.
		if int64(len(body))-end < minPartSize {
			end = int64(len(body))
		}
		out, err := s.client.UploadPart(ctx, &s3.UploadPartInput{
			Bucket: &s.bucket, Key: &key, UploadId: uploadID, PartNumber: aws.Int32(n),
			Body: bytes.NewReader(body[off:end]), ContentLength: aws.Int64(end - off),
			// SSE-C sends the key with every part.
			SSECustomerAlgorithm: s.objects.customerAlgorithm, SSECustomerKey: s.objects.customerKey, SSECustomerKeyMD5: s.objects.customerKeyMD5,
		})
		if err != nil {
			return nil, fmt.Errorf("part %d: %w", n, err)
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(n)})
		if end == int64(len(body)) {
			break
		}
	}
	return parts, nil
}

// abort drops an unfinished upload, best effort: an upload left behind is
// invisible (it only costs storage until the bucket's lifecycle rule or the
// next recovery removes it).
func (s *store) abort(key string, uploadID *string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: &key, UploadId: uploadID})
}

// list returns the keys under prefix.
func (s *store) list(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("s3sink: list %s: %w", prefix, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys, nil
}

// metadata is an object's user metadata (keys lower-case).
func (s *store) metadata(ctx context.Context, key string) (map[string]string, error) {
	// An SSE-C object's metadata is read with its key.
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key,
		SSECustomerAlgorithm: s.objects.customerAlgorithm, SSECustomerKey: s.objects.customerKey, SSECustomerKeyMD5: s.objects.customerKeyMD5})
	if err != nil {
		return nil, fmt.Errorf("s3sink: head %s: %w", key, err)
	}
	return out.Metadata, nil
}

func (s *store) delete(ctx context.Context, key string) error {
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key}); err != nil {
		return fmt.Errorf("s3sink: delete %s: %w", key, err)
	}
	return nil
}

// abortStaleUploads aborts unfinished multipart uploads under prefix whose
// key keep says are this task's, left by a task that died mid-upload.
// Stores without ListMultipartUploads are skipped: such uploads are
// invisible anyway.
func (s *store) abortStaleUploads(ctx context.Context, prefix string, keep func(key string) bool) error {
	out, err := s.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &s.bucket, Prefix: &prefix})
	if err != nil {
		var nf *types.NoSuchUpload
		if errors.As(err, &nf) {
			return nil
		}
		return fmt.Errorf("s3sink: list multipart uploads under %s: %w", prefix, err)
	}
	for _, u := range out.Uploads {
		if keep(aws.ToString(u.Key)) {
			s.abort(aws.ToString(u.Key), u.UploadId)
		}
	}
	return nil
}
