import '../../local/polyfills';

// The machines run Node 20; the SDK's notice about Node 22 would only bury test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
