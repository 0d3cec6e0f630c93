/**
 * The AWS SDK for JavaScript warns once per process, on Node.js 20, that its releases published
 * after the first week of January 2027 will require Node.js 22 (aws-sdk-js-v3 issue 7983). This
 * project supports Node.js 20 with the SDK release its lock file pins (README, "Node.js"), and
 * every process printed the warning at start, where it read like a failure. The SDK's documented
 * switch, `AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true`, silences it; an operator who set
 * the variable already keeps their choice. Call before creating an S3 client.
 */
export function silenceAwsSdkNodeSupportWarning(env: NodeJS.ProcessEnv = process.env): void {
  env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}
