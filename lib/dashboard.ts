/**
 * The web dashboard on AWS (issue 14; docs/decisions.md "Dashboard"): the built files of clients/dashboard/dist
 * in a private S3 bucket, behind a CloudFront distribution that also forwards `/api/*` to the REST API, so the
 * dashboard and the API share one origin (no CORS, `connect-src 'self'`). Every answer carries the same
 * Content-Security-Policy and security headers as the local service's (lambdas/dashboard/static.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  AllowedMethods, CachePolicy, Distribution, HeadersFrameOption, HeadersReferrerPolicy, OriginRequestPolicy,
  PriceClass, ResponseHeadersPolicy, ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { RestApiOrigin, S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { DASHBOARD_CSP, DASHBOARD_SECURITY_HEADERS } from '../lambdas/dashboard/static.ts';
import type { StageConfig } from './stage.ts';

/** The folder `npm run build:dashboard` writes. */
const DIST = fileURLToPath(new URL('../clients/dashboard/dist/', import.meta.url));

/** The built dashboard, built first when absent (a fresh clone synthesizes without a separate step). */
function dashboardDist(): string {
  if (!existsSync(`${DIST}index.html`)) {
    execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/build-dashboard.ts', import.meta.url))], { stdio: 'inherit' });
  }
  return DIST;
}

export interface DashboardProps {
  stage: StageConfig;
  api: RestApi;
}

export class Dashboard extends Construct {
  readonly bucket: Bucket;
  readonly distribution: Distribution;

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    const { stage } = props;
    this.bucket = new Bucket(this, 'Files', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      removalPolicy: stage.name === 'prod' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      autoDeleteObjects: stage.name !== 'prod',
    });
    const headers = new ResponseHeadersPolicy(this, 'Headers', {
      comment: 'scrape-ai dashboard: the CSP and security headers of lambdas/dashboard/static.ts',
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: DASHBOARD_CSP, override: true },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: true, override: true },
      },
      customHeadersBehavior: {
        customHeaders: ['Cross-Origin-Opener-Policy', 'Permissions-Policy'].map((header) => ({ header, value: DASHBOARD_SECURITY_HEADERS[header]!, override: true })),
      },
    });
    const apiBehavior = {
      origin: new RestApiOrigin(props.api),
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      allowedMethods: AllowedMethods.ALLOW_ALL,
      cachePolicy: CachePolicy.CACHING_DISABLED,
      originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
    };
    this.distribution = new Distribution(this, 'Cdn', {
      comment: `scrape-ai ${stage.name}: dashboard and API`,
      defaultRootObject: 'index.html',
      priceClass: PriceClass.PRICE_CLASS_100,
      defaultBehavior: {
        origin: S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        responseHeadersPolicy: headers,
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
      },
      // The API through the same origin: nothing cached, every header but Host forwarded (Authorization too); `/mcp`
      // is the MCP endpoint (docs/mcp.md).
      additionalBehaviors: Object.fromEntries(['/api/*', '/mcp'].map((pattern) => [pattern, apiBehavior])),
    });
    new BucketDeployment(this, 'Deploy', {
      sources: [Source.asset(dashboardDist())],
      destinationBucket: this.bucket,
      distribution: this.distribution,
      distributionPaths: ['/index.html'],
      memoryLimit: 256,
    });
  }
}
