import '../../engine/polyfills';
