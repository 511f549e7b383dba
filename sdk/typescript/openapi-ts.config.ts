import { defineConfig } from '@hey-api/openapi-ts';

// Generated from the server's OpenAPI (openapi.json, written by `bash scripts/sdk`). The
// output in src/generated is committed; tests/test_typescript_sdk.py regenerates it into a
// temporary directory (the two variables below) and fails on any difference.
export default defineConfig({
  input: process.env.NATURALI_SDK_INPUT ?? './openapi.json',
  output: {
    path: process.env.NATURALI_SDK_OUTPUT ?? './src/generated',
    importFileExtension: '.js',
    postProcess: [],
  },
  plugins: [
    '@hey-api/client-fetch',
    '@hey-api/typescript',
    {
      name: '@hey-api/sdk',
      operations: { strategy: 'byTags', container: 'class', methods: 'instance' },
    },
  ],
});
